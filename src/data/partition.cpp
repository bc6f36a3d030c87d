#include "pdsp/data/partition.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/util/errors.hpp"

namespace pdsp {

std::vector<int64_t> partition_by_cost(const std::vector<double>& cost, int parts) {
  const int64_t n = static_cast<int64_t>(cost.size());
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  std::vector<int64_t> bounds(static_cast<size_t>(parts) + 1, 0);
  bounds[parts] = n;
  int64_t cursor = 0;
  for (int part = 1; part < parts; ++part) {
    const double target = prefix[n] * part / parts;
    while (cursor < n && prefix[cursor + 1] <= target) ++cursor;
    // cursor: last boundary with prefix <= target; step over the crossing example if closer.
    int64_t boundary = cursor;
    if (cursor < n && std::abs(prefix[cursor + 1] - target) < std::abs(prefix[cursor] - target))
      boundary = cursor + 1;
    bounds[part] = std::max(boundary, bounds[part - 1]);
  }
  return bounds;
}

double partition_imbalance(const std::vector<double>& cost, const std::vector<int64_t>& bounds) {
  const size_t parts = bounds.size() - 1;
  double total = 0, largest = 0;
  for (size_t part = 0; part < parts; ++part) {
    double sum = 0;
    for (int64_t i = bounds[part]; i < bounds[part + 1]; ++i) sum += cost[i];
    total += sum;
    largest = std::max(largest, sum);
  }
  return total > 0 ? largest * static_cast<double>(parts) / total : 1.0;
}

namespace {

// A run of consecutive small examples, or one large example, and the ranks it gets.
struct Unit {
  int64_t first, last;
  bool large;
  double cost;
  int64_t cap;  // the most ranks it can use: examples (whole) or variables (shards)
  int ranks = 1;
};

// Every example in one unit split over the ranks (a shard per rank, at most one per variable):
// what auto does when a large example cannot have ranks of its own.
std::vector<RankSlice> one_unit(int64_t examples, int64_t variables, int ranks) {
  const int shards = static_cast<int>(std::min<int64_t>(ranks, variables));
  std::vector<RankSlice> slices;
  for (int k = 0; k < shards; ++k) slices.push_back({0, examples, k, shards, 0});
  for (int r = shards; r < ranks; ++r) slices.push_back({examples, examples, 0, 1, r});
  return slices;
}

std::vector<RankSlice> whole_slices(const std::vector<double>& cost, int ranks) {
  const std::vector<int64_t> bounds = partition_by_cost(cost, ranks);
  std::vector<RankSlice> slices(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) slices[r] = {bounds[r], bounds[r + 1], 0, 1, r};
  return slices;
}

}  // namespace

std::vector<RankSlice> plan_rank_slices(const std::vector<double>& cost,
                                        const std::vector<int64_t>& variables, int ranks,
                                        int shards) {
  const auto examples = static_cast<int64_t>(cost.size());
  double total = 0.0;
  for (double c : cost) total += c;
  if (shards == 1 || ranks == 1 || total <= 0.0) return whole_slices(cost, ranks);
  const double share = total / ranks;
  const double limit = examples < ranks ? share : 1.1 * share;
  std::vector<Unit> units;
  for (int64_t n = 0; n < examples; ++n) {
    const bool large = cost[n] > limit && variables[n] > 1;
    if (!large && !units.empty() && !units.back().large) {
      units.back().last = n + 1;
      units.back().cost += cost[n];
      ++units.back().cap;
      continue;
    }
    units.push_back({n, n + 1, large, cost[n], large ? variables[n] : 1});
  }
  const bool any_large =
      std::any_of(units.begin(), units.end(), [](const Unit& u) { return u.large; });
  if (!any_large) return whole_slices(cost, ranks);
  int64_t all_variables = 0;
  for (int64_t v : variables) all_variables += v;
  // Too few ranks for a group per large example and per run of small ones between them: the
  // examples are split as one unit, so that the ranks still share the work evenly.
  if (static_cast<int64_t>(units.size()) > ranks)
    return shards == 0 ? one_unit(examples, all_variables, ranks) : whole_slices(cost, ranks);
  int used = static_cast<int>(units.size());
  if (shards > 1) {
    for (Unit& u : units)
      if (u.large) {
        if (shards > u.cap)
          throw InputError("--shards " + std::to_string(shards) + ": example " +
                           std::to_string(u.first) + " has " + std::to_string(u.cap) +
                           " variables: at most one shard per variable");
        u.ranks = shards;
        used += u.ranks - 1;
      }
    if (used > ranks)
      throw InputError("--shards " + std::to_string(shards) + ": the large examples need " +
                       std::to_string(used) + " ranks and the run has " + std::to_string(ranks));
  }
  // The remaining ranks one by one to the unit with the most cost per rank that can use one more.
  for (; used < ranks; ++used) {
    Unit* best = nullptr;
    for (Unit& u : units) {
      const bool can_grow = u.ranks < u.cap && (shards == 0 || !u.large);
      if (can_grow && (best == nullptr || u.cost / u.ranks > best->cost / best->ranks)) best = &u;
    }
    if (best == nullptr) break;
    ++best->ranks;
  }
  // Auto, and a large example is left with one rank (its group could not grow): as above.
  if (shards == 0 && std::any_of(units.begin(), units.end(),
                                 [](const Unit& u) { return u.large && u.ranks == 1; }))
    return one_unit(examples, all_variables, ranks);
  std::vector<RankSlice> slices;
  for (const Unit& u : units) {
    const int first_rank = static_cast<int>(slices.size());
    if (u.large) {
      for (int k = 0; k < u.ranks; ++k) slices.push_back({u.first, u.last, k, u.ranks, first_rank});
      continue;
    }
    const std::vector<double> run(cost.begin() + u.first, cost.begin() + u.last);
    const std::vector<int64_t> bounds = partition_by_cost(run, u.ranks);
    for (int k = 0; k < u.ranks; ++k)
      slices.push_back({u.first + bounds[k], u.first + bounds[k + 1], 0, 1, first_rank + k});
  }
  // Ranks no unit could use hold nothing (and still join every collective).
  while (static_cast<int>(slices.size()) < ranks)
    slices.push_back({examples, examples, 0, 1, static_cast<int>(slices.size())});
  return slices;
}

std::string describe_rank_slices(const std::vector<RankSlice>& slices) {
  std::string text;
  int whole_ranks = 0, empty_ranks = 0;
  for (size_t r = 0; r < slices.size(); ++r) {
    const RankSlice& s = slices[r];
    if (s.shards == 1) {
      (s.first == s.last ? empty_ranks : whole_ranks) += 1;
      continue;
    }
    if (s.shard != 0) continue;
    text += (text.empty() ? "" : ", ");
    text += s.last - s.first == 1 ? "example " + std::to_string(s.first)
                                  : "examples " + std::to_string(s.first) + "-" +
                                        std::to_string(s.last - 1) + " as one";
    text += " in " + std::to_string(s.shards) + " shards on ranks " + std::to_string(r) + "-" +
            std::to_string(r + s.shards - 1);
  }
  if (text.empty()) return "whole examples on every rank";
  if (whole_ranks > 0) text += "; whole examples on " + std::to_string(whole_ranks) + " rank(s)";
  if (empty_ranks > 0) text += "; nothing on " + std::to_string(empty_ranks) + " rank(s)";
  return text;
}

}  // namespace pdsp
