#pragma once
// Boosted regression trees as a function class (Domke, NIPS 2013, section 8): each round
// induces one regression tree per output on the gradient of the fitted objective (least squares,
// every leaf holding at least a fraction of the rows), then sets each leaf's value by the
// caller's fit of the objective itself (for pdsp, a Newton solve of the logistic loss biased by
// the messages), times the shrinkage. XGBoost's C API induces the trees (its custom-gradient
// round with unit weights); pdsp keeps the leaf values, so that they are the logistic fits and
// not XGBoost's one-step estimates. The trees come out the same for any thread count: XGBoost
// grows them on one thread here (it looks up leaves on all of the run's threads).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/stored_trees.hpp"

namespace pdsp {

struct TreeSettings {
  double shrinkage = 0.25;  // the leaf values' factor (--tree-shrinkage)
  double min_leaf = 0.05;   // the least fraction of the rows a leaf holds (--tree-min-leaf)
  // The fraction of the rows each round's trees are induced on, drawn afresh every round from
  // `seed` and the round's number (--tree-subsample, --seed): Friedman's stochastic gradient
  // boosting, which Domke's section 8 uses. 1 induces on every row.
  double subsample = 1.0;
  int seed = 1;
};

// Dense float rows (XGBoost's DMatrix) that the trees read: one per data set, built once.
class TreeRows {
 public:
  TreeRows(std::span<const float> values, int64_t rows, int dim);
  ~TreeRows();
  TreeRows(const TreeRows&) = delete;
  TreeRows& operator=(const TreeRows&) = delete;
  int64_t rows() const { return rows_; }
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
  int64_t rows_ = 0;
};

// The value to put on a leaf of output `output`'s tree that holds `rows` (before shrinkage).
using LeafFit = std::function<double(int output, std::span<const int64_t> rows)>;

class TreeEnsemble {
 public:
  // No trees yet: every output 0. The rows will have `dim` features.
  TreeEnsemble(int outputs, int dim, const TreeSettings& settings);
  // The trees of a model file or checkpoint (throws InputError naming `source` when XGBoost
  // cannot read them).
  TreeEnsemble(const StoredEnsemble& stored, int dim, const TreeSettings& settings,
               const std::string& source);
  ~TreeEnsemble();
  TreeEnsemble(const TreeEnsemble&) = delete;
  TreeEnsemble& operator=(const TreeEnsemble&) = delete;

  int outputs() const { return outputs_; }
  int64_t rounds() const { return trees() / outputs_; }
  int64_t trees() const { return static_cast<int64_t>(tree_offset_.size()) - 1; }

  // One round on `rows`: the trees fit -gradient [rows x outputs] by least squares where
  // `weight` [rows x outputs] is 1 (0: a padding output the row does not have), each leaf
  // holding at least min_leaf of the rows; `fit` sets the leaves; margins [rows x outputs] gets
  // the new trees' values added. With a subsample below 1 the trees' splits see only the drawn
  // rows (min_leaf of those), and `fit` still gets every row of a leaf.
  void add_round(const TreeRows& rows, std::span<const float> gradient,
                 std::span<const float> weight, const LeafFit& fit, std::span<double> margins);
  // Multiplies the leaf values of the last round's trees by `factor`.
  void scale_last_round(double factor);
  // margins [rows x outputs] += the trees of rounds [first_round, rounds()).
  void add_margins(const TreeRows& rows, int64_t first_round, std::span<double> margins) const;
  // The largest |sum of one output's trees| can reach: per output, the sum over its trees of
  // the largest |leaf value|, the largest of those.
  double largest_term() const;

  // The rows round `round`'s splits see out of `rows`: 1 for a drawn row, 0 for the others.
  std::vector<float> drawn_rows(int64_t rows, int64_t round) const;

  StoredEnsemble stored(const std::string& kind, int32_t type) const;

 private:
  // XGBoost's parameters for the next round (set again after a load: a model file keeps no
  // training parameters).
  void configure(int64_t rows);
  // The leaf (XGBoost node id) of every row in each tree of rounds [first_round, first_round +
  // count): [rows x count x outputs].
  std::vector<int32_t> leaves(const TreeRows& rows, int64_t first_round, int64_t count) const;

  void* booster_ = nullptr;
  int outputs_;
  int dim_;
  TreeSettings settings_;
  std::vector<int64_t> tree_offset_{0};  // StoredEnsemble's
  std::vector<double> leaf_value_;
};

}  // namespace pdsp
