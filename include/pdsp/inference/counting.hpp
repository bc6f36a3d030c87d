#pragma once
// Counting numbers (fractional entropy weights) c_v and c_a of every region (design.md §1).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/scratch.hpp"
#include "pdsp/util/counting_mode.hpp"

namespace pdsp {

CountingMode parse_counting_mode(const std::string& text);  // throws InputError

// One number per region, kept as a single number when all are equal (uniform counting numbers,
// and every c_a of Bethe's): at 50 million variables the vectors would take 1.2 GB.
class RegionNumbers {
 public:
  RegionNumbers() = default;
  explicit RegionNumbers(std::vector<double> values);
  RegionNumbers(int64_t size, double value) : shared_(value), size_(size) {}
  double operator[](int64_t i) const { return values_.empty() ? shared_ : values_[i]; }
  int64_t size() const { return size_; }
  // The number every region has, or nullptr when they differ.
  const double* shared() const { return values_.empty() ? &shared_ : nullptr; }
  // The numbers of regions [first, last) as an array: the stored ones, or `lane` filled with
  // the shared one (for SIMD loops). The range must fit the lane, as the chunks of a work plan
  // fit the workspace's lanes.
  const double* range(int64_t first, int64_t last, ScratchVector& lane) const;
  template <class Predicate>
  bool any_of(Predicate&& p) const {
    if (values_.empty()) return size_ > 0 && p(shared_);
    for (double x : values_)
      if (p(x)) return true;
    return false;
  }

 private:
  std::vector<double> values_;  // empty when all are `shared_`
  double shared_ = 0;
  int64_t size_ = 0;
};

struct CountingNumbers {
  RegionNumbers var;          // c_v
  RegionNumbers factor;       // c_a
  std::vector<double> block;  // chat_v = c_v + sum_{a in N(v)} c_a, > 0 for every variable
  // The mode used: Auto becomes File when the data carry both arrays, and stays Auto otherwise.
  CountingMode mode = CountingMode::Uniform;
  // [examples] 1 for an example without a cycle whose numbers are Bethe's (c_a = 1,
  // c_v = 1 - degree): there the beliefs at converged messages are the true marginals, whatever
  // the mode chose them.
  std::vector<uint8_t> exact;
  int64_t exact_examples() const { return std::count(exact.begin(), exact.end(), uint8_t{1}); }
};

// Whether example n's factor graph (variables and factors as nodes, one edge per slot) has no
// cycle: a forest has as many edges as nodes minus components.
bool is_acyclic(const Dataset& data, int64_t n);

// `source` names the data file in error messages. Auto means File when the data carry both
// arrays; otherwise Bethe numbers on the examples whose factor graph has no cycle (where they
// are exact: the beliefs are the true marginals), if epsilon > 0 (at eps = 0 the block update
// needs c_v >= 0), and uniform ones on the others. Only Auto reads `epsilon`.
CountingNumbers make_counting_numbers(const Dataset& data, const FactorGraph& graph,
                                      CountingMode mode, const std::string& source,
                                      double epsilon = 1.0);

}  // namespace pdsp
