#pragma once
// Draws indices in proportion to non-negative weights that change one at a time, in O(log n)
// per draw and per change (a Fenwick tree of partial sums). The structured SVM learner draws
// examples in proportion to their last duality gap: those far from their optimum get the steps
// (Osokin et al. 2016, "Minding the gaps for block Frank-Wolfe").
#include <cstdint>
#include <random>
#include <vector>

namespace pdsp {

class GapSampler {
 public:
  // Weights below 0 count as 0.
  explicit GapSampler(const std::vector<double>& weights);
  void set(size_t i, double weight);
  double total() const;
  // An index drawn with probability weight / total; uniform when every weight is 0.
  size_t draw(std::mt19937_64& rng) const;

 private:
  void add(size_t i, double change);
  std::vector<double> weight_;
  std::vector<double> tree_;  // tree_[i] sums weight_ over (i - lowbit(i), i]
};

}  // namespace pdsp
