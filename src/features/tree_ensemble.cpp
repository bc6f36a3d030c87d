#include "pdsp/features/tree_ensemble.hpp"

#include <omp.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

void check(int status, const char* call) {
  if (status != 0)
    throw std::runtime_error(std::string("XGBoost ") + call + ": " + XGBGetLastError());
}

BoosterHandle new_booster() {
  BoosterHandle booster = nullptr;
  check(XGBoosterCreate(nullptr, 0, &booster), "XGBoosterCreate");
  return booster;
}

// The whole number XGBoost's configuration gives `key` (e.g. "num_class":"4"), or -1.
int64_t configured_number(BoosterHandle booster, const std::string& key) {
  bst_ulong length = 0;
  const char* json = nullptr;
  check(XGBoosterSaveJsonConfig(booster, &length, &json), "XGBoosterSaveJsonConfig");
  const std::string config(json, length);
  const size_t at = config.find("\"" + key + "\":\"");
  if (at == std::string::npos) return -1;
  return std::strtoll(config.c_str() + at + key.size() + 4, nullptr, 10);
}

}  // namespace

TreeRows::TreeRows(std::span<const float> values, int64_t rows, int dim) : rows_(rows) {
  // NaN marks a missing value; the observation rows' absent entries are zeros, present.
  check(XGDMatrixCreateFromMat(values.data(), static_cast<bst_ulong>(rows),
                               static_cast<bst_ulong>(dim), NAN, &handle_),
        "XGDMatrixCreateFromMat");
}

TreeRows::~TreeRows() {
  XGDMatrixFree(handle_);
}

TreeEnsemble::TreeEnsemble(int outputs, int dim, const TreeSettings& settings)
    : booster_(new_booster()), outputs_(outputs), dim_(dim), settings_(settings) {}

TreeEnsemble::TreeEnsemble(const StoredEnsemble& stored, int dim, const TreeSettings& settings,
                           const std::string& source)
    : booster_(new_booster()),
      outputs_(stored.outputs),
      dim_(dim),
      settings_(settings),
      tree_offset_(stored.tree_offset),
      leaf_value_(stored.leaf_value) {
  if (stored.trees() == 0) return;  // XGBoost writes no model before its first round
  // The destructor does not run when a constructor throws: free the booster on every exit.
  std::unique_ptr<void, int (*)(BoosterHandle)> guard(booster_, XGBoosterFree);
  const std::string booster =
      source + ": /trees/" + stored.kind + "_" + std::to_string(stored.type) + "/booster";
  if (XGBoosterLoadModelFromBuffer(booster_, stored.booster.data(),
                                   static_cast<bst_ulong>(stored.booster.size())) != 0) {
    const std::string why = XGBGetLastError();
    throw InputError(booster + " is not a model XGBoost reads: " + why.substr(0, why.find('\n')));
  }
  // The leaf values are read by the booster's node ids, so its trees must be the ones
  // tree_offset describes: as many, of as many outputs, on the data's features.
  int rounds = 0;
  bst_ulong features = 0;
  check(XGBoosterBoostedRounds(booster_, &rounds), "XGBoosterBoostedRounds");
  check(XGBoosterGetNumFeature(booster_, &features), "XGBoosterGetNumFeature");
  // XGBoost records num_class 0 for a single output.
  const int64_t classes = std::max<int64_t>(configured_number(booster_, "num_class"), 1);
  if (int64_t{rounds} * outputs_ != stored.trees() || classes != outputs_ ||
      features != static_cast<bst_ulong>(dim))
    throw InputError(booster + " holds " + std::to_string(rounds) + " rounds of " +
                     std::to_string(classes) + " outputs on " + std::to_string(features) +
                     " features, but tree_offset has " + std::to_string(stored.trees()) +
                     " trees of " + std::to_string(outputs_) + " outputs and the data's rows " +
                     std::to_string(dim) + " features");
  guard.release();
}

TreeEnsemble::~TreeEnsemble() {
  XGBoosterFree(booster_);
}

void TreeEnsemble::configure(int64_t rows) {
  const std::string min_weight = std::to_string(settings_.min_leaf * static_cast<double>(rows));
  const std::pair<const char*, std::string> parameters[] = {
      {"num_class", std::to_string(outputs_)},
      {"num_feature", std::to_string(dim_)},
      {"objective", "multi:softmax"},  // the model's shape only: the gradients are pdsp's
      {"base_score", "0"},
      {"booster", "gbtree"},
      {"tree_method", "hist"},
      // Grown leaf by leaf until no split keeps min_leaf of the rows on both sides or
      // reduces the squared error: the leaf size is the only bound, as in the paper.
      {"grow_policy", "lossguide"},
      {"max_depth", "0"},
      {"max_leaves", "0"},
      {"min_child_weight", min_weight},
      {"lambda", "0"},
      {"eta", "1"},  // the shrinkage is applied to pdsp's leaf values
      {"nthread", "1"},
      {"seed", "0"},
      {"verbosity", "0"}};
  for (const auto& [name, value] : parameters)
    check(XGBoosterSetParam(booster_, name, value.c_str()), "XGBoosterSetParam");
}

std::vector<int32_t> TreeEnsemble::leaves(const TreeRows& rows, int64_t first_round,
                                          int64_t count) const {
  // XGBoost gives leaves of the rounds from the first only: a slice of the model holds the
  // rounds asked for. The booster may hold one round more than rounds() says (add_round, before
  // its leaves).
  BoosterHandle slice = booster_;
  if (first_round > 0 || count != 1 || rounds() > 1)
    check(XGBoosterSlice(booster_, static_cast<int>(first_round),
                         static_cast<int>(first_round + count), 1, &slice),
          "XGBoosterSlice");
  // The leaves do not depend on the thread count, so XGBoost may use all of the run's threads
  // here; configure() sets one thread again before the next round is grown.
  check(XGBoosterSetParam(slice, "nthread", std::to_string(omp_get_max_threads()).c_str()),
        "XGBoosterSetParam");
  const char* config =
      R"({"type": 6, "training": false, "strict_shape": false, "iteration_begin": 0, )"
      R"("iteration_end": 0})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  const int status =
      XGBoosterPredictFromDMatrix(slice, rows.handle(), config, &shape, &dims, &result);
  std::vector<int32_t> leaf;
  if (status == 0) {
    const int64_t size = rows.rows() * count * outputs_;
    leaf.resize(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) leaf[i] = static_cast<int32_t>(result[i]);
  }
  if (slice != booster_) XGBoosterFree(slice);
  check(status, "XGBoosterPredictFromDMatrix");
  return leaf;
}

std::vector<float> TreeEnsemble::drawn_rows(int64_t rows, int64_t round) const {
  // A generator of its own per round: the draws depend on the seed and the round only, so a
  // resumed run and any rank count (every rank holds all rows) draw the same rows. A run's
  // ensembles share the stream; their rows are different regions, so that ties nothing together.
  std::mt19937_64 rng(static_cast<uint64_t>(settings_.seed) * 0x9e3779b97f4a7c15ull +
                      static_cast<uint64_t>(round));
  std::vector<float> drawn(static_cast<size_t>(rows));
  // The top 53 bits as a uniform number in [0, 1): the same on every platform, unlike
  // std::uniform_real_distribution.
  for (float& d : drawn) d = static_cast<double>(rng() >> 11) * 0x1p-53 < settings_.subsample;
  return drawn;
}

void TreeEnsemble::add_round(const TreeRows& rows, std::span<const float> gradient,
                             std::span<const float> weight, const LeafFit& fit,
                             std::span<double> margins) {
  const int64_t round = rounds();
  std::span<const float> split_gradient = gradient, split_weight = weight;
  std::vector<float> drawn_gradient, drawn_weight;
  int64_t split_rows = rows.rows();
  if (settings_.subsample < 1.0) {
    // A row left out gets gradient and weight 0: it adds nothing to a split's statistics.
    const std::vector<float> drawn = drawn_rows(rows.rows(), round);
    split_rows = static_cast<int64_t>(std::count(drawn.begin(), drawn.end(), 1.0f));
    drawn_gradient.assign(gradient.begin(), gradient.end());
    drawn_weight.assign(weight.begin(), weight.end());
    for (size_t i = 0; i < drawn_gradient.size(); ++i) {
      drawn_gradient[i] *= drawn[i / static_cast<size_t>(outputs_)];
      drawn_weight[i] *= drawn[i / static_cast<size_t>(outputs_)];
    }
    split_gradient = drawn_gradient;
    split_weight = drawn_weight;
  }
  configure(split_rows);
  // XGBoost's API takes mutable pointers it does not write through.
  check(XGBoosterBoostOneIter(booster_, rows.handle(), const_cast<float*>(split_gradient.data()),
                              const_cast<float*>(split_weight.data()),
                              static_cast<bst_ulong>(split_gradient.size())),
        "XGBoosterBoostOneIter");
  const std::vector<int32_t> leaf = leaves(rows, round, 1);
  for (int k = 0; k < outputs_; ++k) {
    std::map<int32_t, std::vector<int64_t>> rows_of_leaf;  // ordered: leaf ids ascending
    for (int64_t r = 0; r < rows.rows(); ++r) rows_of_leaf[leaf[r * outputs_ + k]].push_back(r);
    const int32_t nodes = rows_of_leaf.empty() ? 0 : rows_of_leaf.rbegin()->first + 1;
    std::vector<double> value(static_cast<size_t>(nodes), 0.0);
    for (const auto& [node, members] : rows_of_leaf) {
      value[node] = settings_.shrinkage * fit(k, members);
      for (int64_t r : members) margins[r * outputs_ + k] += value[node];
    }
    leaf_value_.insert(leaf_value_.end(), value.begin(), value.end());
    tree_offset_.push_back(static_cast<int64_t>(leaf_value_.size()));
  }
}

void TreeEnsemble::scale_last_round(double factor) {
  if (trees() == 0) return;
  const int64_t first = tree_offset_[static_cast<size_t>(trees() - outputs_)];
  for (auto i = static_cast<size_t>(first); i < leaf_value_.size(); ++i) leaf_value_[i] *= factor;
}

void TreeEnsemble::add_margins(const TreeRows& rows, int64_t first_round,
                               std::span<double> margins) const {
  // A chunk of rounds at a time: XGBoost fills each row's features once per call, which costs
  // about a third of the leaf look-ups when a call holds one round; the leaves held at once
  // stay near kChunkLeaves. Each margin still sums its trees in round order.
  constexpr int64_t kChunkLeaves = int64_t{1} << 24;
  const int64_t per_round = std::max<int64_t>(1, rows.rows() * outputs_);
  const int64_t chunk = std::max<int64_t>(1, kChunkLeaves / per_round);
  for (int64_t first = first_round; first < rounds(); first += chunk) {
    const int64_t count = std::min(chunk, rounds() - first);
    const std::vector<int32_t> leaf = leaves(rows, first, count);
    const int64_t width = count * outputs_;
    for (int64_t r = 0; r < rows.rows(); ++r)
      for (int64_t j = 0; j < width; ++j) {
        const int64_t tree = first * outputs_ + j;
        const int64_t node = leaf[r * width + j];
        // A node beyond the tree's leaves held no training row: it adds nothing.
        if (node < tree_offset_[tree + 1] - tree_offset_[tree])
          margins[r * outputs_ + j % outputs_] += leaf_value_[tree_offset_[tree] + node];
      }
  }
}

double TreeEnsemble::largest_term() const {
  std::vector<double> bound(static_cast<size_t>(outputs_), 0.0);
  for (int64_t tree = 0; tree < trees(); ++tree) {
    double largest = 0.0;
    for (int64_t i = tree_offset_[tree]; i < tree_offset_[tree + 1]; ++i)
      largest = std::max(largest, std::abs(leaf_value_[i]));
    bound[tree % outputs_] += largest;
  }
  return bound.empty() ? 0.0 : *std::max_element(bound.begin(), bound.end());
}

StoredEnsemble TreeEnsemble::stored(const std::string& kind, int32_t type) const {
  StoredEnsemble out;
  out.kind = kind;
  out.type = type;
  out.outputs = outputs_;
  out.tree_offset = tree_offset_;
  out.leaf_value = leaf_value_;
  if (trees() > 0) {
    bst_ulong length = 0;
    const char* bytes = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &length, &bytes),
          "XGBoosterSaveModelToBuffer");
    out.booster.assign(bytes, bytes + length);
  }
  return out;
}

}  // namespace pdsp
