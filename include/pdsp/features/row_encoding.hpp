#pragma once
// Format 1's feature rows: every (variable, state) and every (factor, joint state) has a sparse
// row of (parameter, value) pairs. Moments are summed in an order fixed by the data, so that
// the result is the same for any thread count (design.md §6), in one of two orders chosen by
// the shape of the feature matrix:
//  - by rows: fixed blocks of rows, each summed into its own vector over all parameters, then the
//    blocks added in order. No copy of the features; parallel even when a few shared parameters
//    carry all the entries. Used when there are at least 8 entries per parameter.
//  - by parameters: the feature matrix transposed to parameter-major order, each parameter
//    summed on its own. Costs a copy of the features; used when parameters are many (per-site
//    models of a few large examples), where block vectors would be larger still.
// Both passes run at every iteration (the potentials at every step-search trial), so a part of
// the layout whose rows each hold exactly one entry (the factor tables of the grid generators)
// skips the row pointers and the inner loop: the same sums in the same order, a third fewer
// bytes and a loop that vectorises.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/features/feature_encoding.hpp"

namespace pdsp {

class RowEncoding final : public FeatureEncoding {
 public:
  enum class Order { Auto, ByRows, ByParams };
  RowEncoding(const Dataset& data, Order order);

  std::string name() const override { return "rows"; }
  void add_potentials(std::span<const double> theta, std::span<double> potential,
                      const uint8_t* skip_factor = nullptr) const override;
  // Skipped factors hold no rows (only factors without rows share a table), so no row reads
  // them and skip_factor is not needed.
  void add_moments(std::span<const double> weight, std::span<double> z,
                   const uint8_t* skip_factor = nullptr) const override;
  // The labelled positions' rows in position order: a pass over those rows only.
  void add_truth_moments(const GroundTruth& truth, std::span<double> z) const override;
  void add_example_potentials(int64_t n, std::span<const double> theta,
                              std::span<double> potential) const override;
  void add_example_moments(int64_t n, std::span<const double> weight,
                           std::span<double> z) const override;
  double largest_row_sum() const override { return largest_row_sum_; }

  // potential = base (on the states; 0 elsewhere) + this encoding's part, in one pass: the
  // first encoding of a FeatureIndex writes instead of adding (skip_factor as in
  // add_potentials).
  void set_potentials(std::span<const double> theta, std::span<const double> base,
                      std::span<double> potential, const uint8_t* skip_factor = nullptr) const;
  Order order() const { return order_; }
  // Whether every row of the variables' (part 0) or the factors' (part 1) features holds
  // exactly one entry.
  bool one_entry_per_row(int part) const { return one_entry_per_row_[part]; }

 private:
  // rows_times_theta over the factors' part, factor by factor when some are skipped.
  void factor_rows_times_theta(std::span<const double> theta, const double* offset, double* out,
                               const uint8_t* skip_factor) const;
  void moments_by_rows(std::span<const double> weight, std::span<double> z) const;
  void moments_by_params(std::span<const double> weight, std::span<double> z) const;

  const Dataset& data_;
  Order order_;
  bool one_entry_per_row_[2];
  double largest_row_sum_;
  // By rows: block b covers positions [block_start_[b], block_start_[b + 1]).
  std::vector<int64_t> block_start_;
  mutable std::vector<double> block_sums_;  // [blocks x params] scratch of add_moments()
  // By parameters: the entries of parameter r are [param_ptr_[r], param_ptr_[r + 1]).
  std::vector<int64_t> param_ptr_;
  std::vector<int64_t> position_;
  std::vector<double> value_;
};

}  // namespace pdsp
