#pragma once
// One way of storing features (an "encoding": format 1's rows, format 2's typed blocks, ...): it
// adds its part of the potentials u = loss + Phi theta and of the moments z = Phi^T weight, in
// the layout [states | table entries]. FeatureIndex holds the encodings a data set uses and
// sums them; a new encoding is one file beside its siblings and one line in
// make_feature_encodings (feature_index.cpp).
#include <cstdint>
#include <span>
#include <string>

#include "pdsp/features/ground_truth.hpp"

namespace pdsp {

class FeatureEncoding {
 public:
  virtual ~FeatureEncoding() = default;
  // What the encoding is, for logs and tests.
  virtual std::string name() const = 0;
  // potential[i] += this encoding's term of position i, for every position except those of the
  // factors a with skip_factor[a] != 0 (null: none), whose tables no kernel reads (see
  // FeatureIndex::potentials).
  virtual void add_potentials(std::span<const double> theta, std::span<double> potential,
                              const uint8_t* skip_factor = nullptr) const = 0;
  // z[r] += sum over positions i of weight[i] times this encoding's feature of parameter r; in an
  // order fixed by the data, so that the sums do not depend on the thread count. The positions
  // of the factors a with skip_factor[a] != 0 (null: none) are not read: their weights are not
  // there (see FeatureIndex::moments).
  virtual void add_moments(std::span<const double> weight, std::span<double> z,
                           const uint8_t* skip_factor = nullptr) const = 0;
  // add_moments on the ground truth's indicator, bitwise, from its positions alone (the dense
  // indicator costs a page per factor table).
  virtual void add_truth_moments(const GroundTruth& truth, std::span<double> z) const = 0;
  // The same two for the positions of example n only (the baselines go example by example).
  virtual void add_example_potentials(int64_t n, std::span<const double> theta,
                                      std::span<double> potential) const = 0;
  virtual void add_example_moments(int64_t n, std::span<const double> weight,
                                   std::span<double> z) const = 0;
  // The largest sum of |feature value| over one position's features in this encoding: its
  // terms never exceed max |theta| times it.
  virtual double largest_row_sum() const = 0;
};

}  // namespace pdsp
