#pragma once
// Moments z_r = sum_i b(i) phi_r(i) of the features, summed in an order fixed by the data so that
// the result is the same for any thread count (design.md §6: results must not depend on threads).
// Two orders, chosen by the shape of the feature matrix:
//  - by rows: fixed blocks of rows, each summed into its own vector over all parameters, then the
//    blocks added in order. No copy of the features; parallel even when a few shared parameters
//    carry all the entries. Used when there are at least 8 entries per parameter.
//  - by parameters: the feature matrix transposed to parameter-major order, each parameter
//    summed on its own. Costs a copy of the features; used when parameters are many (per-site
//    models of a few large examples), where block vectors would be larger still.
// It also computes the potentials u = loss + Phi theta. Both passes run at every iteration (the
// potentials at every step-search trial), so a part of the layout whose rows each hold exactly
// one entry (the factor tables of the grid generators) skips the row pointers and the inner
// loop: the same sums in the same order, a third fewer bytes and a loop that vectorises.
// Format 2's typed features (TypedEncoding, one per region kind) add their terms after the rows.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/learning/typed_encoding.hpp"

namespace pdsp {

class FeatureIndex {
 public:
  enum class Order { Auto, ByRows, ByParams };
  explicit FeatureIndex(const Dataset& data, Order order = Order::Auto);

  // z[r] = sum over feature entries of parameter r of weight[position] * value, where positions
  // follow the potential layout [states | table entries].
  void moments(std::span<const double> weight, std::span<double> z) const;
  // u = loss + Phi theta in the layout [states | table entries]; equal to compute_potentials.
  void potentials(std::span<const double> theta, std::span<const double> loss,
                  std::span<double> potential) const;
  // The same two for the positions of example n only (the baselines go example by example).
  void example_potentials(int64_t n, std::span<const double> theta, std::span<const double> loss,
                          std::span<double> potential) const;
  void add_example_moments(int64_t n, std::span<const double> weight, std::span<double> z) const;
  // A bound on the sum of |feature value| over the features of one position (its row and its
  // typed term): no potential exceeds |loss| + max |theta| times it.
  double largest_row_sum() const { return largest_row_sum_; }
  Order order() const { return order_; }
  // Whether every row of the variables' (part 0) or the factors' (part 1) features holds
  // exactly one entry.
  bool one_entry_per_row(int part) const { return one_entry_per_row_[part]; }

 private:
  void moments_by_rows(std::span<const double> weight, std::span<double> z) const;
  void moments_by_params(std::span<const double> weight, std::span<double> z) const;

  const Dataset& data_;
  std::array<TypedEncoding, 2> typed_;  // variables, factors
  Order order_;
  bool one_entry_per_row_[2];
  double largest_row_sum_;
  // By rows: block b covers positions [block_start_[b], block_start_[b + 1]).
  std::vector<int64_t> block_start_;
  mutable std::vector<double> block_sums_;  // [blocks x params] scratch of moments()
  // By parameters: the entries of parameter r are [param_ptr_[r], param_ptr_[r + 1]).
  std::vector<int64_t> param_ptr_;
  std::vector<int64_t> position_;
  std::vector<double> value_;
};

// d of design.md §2: the feature sums at the ground-truth labelling (each variable's label and
// each factor's labelled joint state), in row order.
void ground_truth_moments(const Dataset& data, const FactorGraph& graph, std::span<double> z);
// (With typed features, the same sums through TypedEncoding.)
// The same labelling as weights in the potential layout: 1 at each labelled position, 0
// elsewhere (for the baselines, which need it example by example).
std::vector<double> ground_truth_weights(const Dataset& data, const FactorGraph& graph);
// Potentials u = loss + Phi theta in the layout [states | table entries], row by row, then the
// typed terms (the reference FeatureIndex::potentials is tested against).
void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential);

}  // namespace pdsp
