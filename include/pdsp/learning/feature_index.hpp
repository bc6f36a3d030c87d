#pragma once
// The feature matrix transposed to parameter-major order. Moments z_r = sum b(i) phi_r(i) are
// then computed one parameter at a time, each in a fixed order, so the result is the same for any
// thread count (design.md §6: results must not depend on threads).
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

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

// The ground-truth labelling as weights in the potential layout: 1 at each variable's label and
// at each factor's labelled joint state, 0 elsewhere. Its moments are d of design.md §2.
std::vector<double> ground_truth_weights(const Dataset& data, const FactorGraph& graph);

// Potentials u = loss + Phi theta in the layout [states | table entries].
void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential);
// The same for the rows of example n only.
void compute_example_potentials(const Dataset& data, int64_t n, std::span<const double> theta,
                                std::span<const double> loss, std::span<double> potential);
// z[param] += weight[i] * value for every feature of the rows of example n (its states and its
// factors' table entries), in row order.
void add_example_moments(const Dataset& data, int64_t n, std::span<const double> weight,
                         std::span<double> z);

}  // namespace pdsp
