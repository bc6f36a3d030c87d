#pragma once
// The feature matrix transposed to parameter-major order. Moments z_r = sum b(i) phi_r(i) are
// then computed one parameter at a time, each in a fixed order, so the result is the same for any
// thread count (design.md §6: results must not depend on threads).
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

class FeatureIndex {
 public:
  explicit FeatureIndex(const Dataset& data);
  // z[r] = sum over feature entries of parameter r of weight[position] * value, where positions
  // follow the potential layout [states | table entries].
  void moments(std::span<const double> weight, std::span<double> z) const;

 private:
  std::vector<int64_t> param_ptr_;  // [params + 1]
  std::vector<int64_t> position_;   // [nnz]
  std::vector<double> value_;       // [nnz]
};

// Potentials u = loss + Phi theta in the layout [states | table entries].
void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential);

}  // namespace pdsp
