#pragma once
// The features of a data set as the list of encodings it uses (feature_encoding.hpp): format
// 1's rows always, format 2's typed blocks of variables and of factors when present. It computes
// the potentials u = loss + Phi theta and the moments z = Phi^T weight as the sums of the
// encodings' parts, each in an order fixed by the data (design.md §6: results must not depend on
// the thread count).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "pdsp/data/allocation.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/features/feature_encoding.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/features/row_encoding.hpp"
#include "pdsp/features/typed_encoding.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

// Which kinds of format 2's typed regions a FeatureIndex covers: a nonlinear model that replaces
// a kind's linear blocks keeps the rest linear through a FeatureIndex without it.
struct TypedKinds {
  bool variables = true;
  bool factors = true;
};

// The linear potential model: f = Phi theta, whose Jacobian is Phi at every theta (moments()).
class FeatureIndex final : public PotentialModel {
 public:
  using Order = RowEncoding::Order;  // the rows' summation order
  explicit FeatureIndex(const Dataset& data, Order order = Order::Auto, TypedKinds kinds = {});

  std::string name() const override { return "linear"; }
  bool is_linear() const override { return true; }
  int64_t num_params() const override { return data_.num_params; }
  void forward(std::span<const double> theta, std::span<const double> base,
               std::span<double> potential,
               std::span<const uint8_t> skip_factor = {}) const override {
    potentials(theta, base, potential, skip_factor);
  }
  void backward(std::span<const double>, std::span<const double> weight, std::span<double> z,
                std::span<const uint8_t> skip_factor = {}) const override {
    moments(weight, z, skip_factor);
  }
  void forward_example(int64_t n, std::span<const double> theta, std::span<const double> base,
                       std::span<double> potential) const override {
    example_potentials(n, theta, base, potential);
  }
  void add_backward_example(int64_t n, std::span<const double>, std::span<const double> weight,
                            std::span<double> z) const override {
    add_example_moments(n, weight, z);
  }
  // Each encoding's sums over the labelled positions alone: bitwise the dense pass on the
  // indicator, without it.
  void backward_truth(std::span<const double> theta, const GroundTruth& truth,
                      std::span<double> z) const override;
  // max |theta| times the largest row sum.
  double largest_term(std::span<const double> theta) const override;
  // The rows' parameters by the kind of their positions, the typed blocks of the kinds covered.
  std::vector<uint8_t> parameter_kinds() const override;

  // z[r] = sum over the features of parameter r of weight[position] * value, where positions
  // follow the potential layout [states | table entries]; the tables of the factors a with
  // skip_factor[a] != 0 are not read (the shared-table factors whose beliefs the general kernels
  // keep folded: their moments come from MessagePassing::add_shared_moments).
  void moments(std::span<const double> weight, std::span<double> z,
               std::span<const uint8_t> skip_factor = {}) const;
  // u = base + Phi theta in the layout [states | table entries], base empty or [states]; equal to
  // compute_potentials, except that the tables of the factors a with skip_factor[a] != 0 are
  // left as they are (the shared-table factors of the general kernels, which read one table for
  // all of them: on OCR writing the others was a fifth of an iteration).
  void potentials(std::span<const double> theta, std::span<const double> base,
                  std::span<double> potential, std::span<const uint8_t> skip_factor = {}) const;
  // The potentials of example n's positions; z += the moments of example n's positions (the
  // baselines go example by example).
  void example_potentials(int64_t n, std::span<const double> theta, std::span<const double> base,
                          std::span<double> potential) const;
  void add_example_moments(int64_t n, std::span<const double> weight, std::span<double> z) const;
  // A bound on the sum of |feature value| over the features of one position (the sum of the
  // encodings' bounds): no potential exceeds |loss| + max |theta| times it.
  double largest_row_sum() const { return largest_row_sum_; }
  Order order() const { return rows_->order(); }
  bool one_entry_per_row(int part) const { return rows_->one_entry_per_row(part); }
  const std::vector<std::unique_ptr<FeatureEncoding>>& encodings() const { return encodings_; }

 private:
  const Dataset& data_;
  std::vector<std::unique_ptr<FeatureEncoding>> encodings_;
  const RowEncoding* rows_;  // the first encoding
  TypedKinds kinds_;
  double largest_row_sum_ = 0;
};

// The encodings `data` uses, rows first: one line per encoding.
std::vector<std::unique_ptr<FeatureEncoding>> make_feature_encodings(const Dataset& data,
                                                                     FeatureIndex::Order order,
                                                                     TypedKinds kinds = {});

// Potentials u = loss + Phi theta in the layout [states | table entries], row by row, then the
// typed terms (the reference FeatureIndex::potentials is tested against).
void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential);

}  // namespace pdsp
