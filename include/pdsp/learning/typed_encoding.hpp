#pragma once
// Potentials and moments of format 2's typed features (data/typed_features.hpp) for one region
// kind, straight from the compact form: a region's potentials are small dense products of its
// type's parameter block with its observation row, never expanded to a row per state.
// Moments are summed over fixed blocks of regions into per-block vectors that are then added in
// block order, so that they do not depend on the thread count (design.md §6).
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/learning/feature_encoding.hpp"

namespace pdsp {

class TypedEncoding final : public FeatureEncoding {
 public:
  enum class Kind { Variables, Factors };
  TypedEncoding(const Dataset& data, Kind kind);

  bool present() const { return types_.present; }
  std::string name() const override;
  // The FeatureEncoding operations over this kind's positions (the layout is [states | table
  // entries]); largest_row_sum is the largest sum of |x_j| over one region's observation row
  // (1 for a shared table).
  void add_potentials(std::span<const double> theta, std::span<double> potential) const override;
  void add_moments(std::span<const double> weight, std::span<double> z) const override;
  void add_example_potentials(int64_t n, std::span<const double> theta,
                              std::span<double> potential) const override;
  void add_example_moments(int64_t n, std::span<const double> weight,
                           std::span<double> z) const override;
  double largest_row_sum() const override { return largest_row_sum_; }

 private:
  // The typed term of region r's states into potential (from its first position); the moments
  // of its states' weights into z, whose index 0 is parameter `first_param`.
  void region_potentials(int64_t r, std::span<const double> theta, double* potential) const;
  void region_moments(int64_t r, const double* weight, double* z, int64_t first_param) const;
  int64_t position(int64_t r) const { return base_ + (*region_offset_)[r]; }
  int64_t size(int64_t r) const { return (*region_offset_)[r + 1] - (*region_offset_)[r]; }

  const RegionTypes& types_;
  const ObservationRows& obs_;
  const std::vector<LocalIndex>* region_offset_;  // state_offset or table_offset
  const std::vector<int64_t>* example_offset_;    // var_offset or factor_offset
  int64_t base_;                                  // 0, or the number of states
  int64_t regions_;
  Kind kind_;
  double largest_row_sum_ = 0;
  // Moment blocks: block b covers regions [block_start_[b], block_start_[b + 1]) and sums into
  // its own vector over the parameters [first_param_, end_param_) that this kind's types read.
  std::vector<int64_t> block_start_;
  int64_t first_param_ = 0, end_param_ = 0;
  mutable std::vector<double> block_sums_;
};

}  // namespace pdsp
