#include "pdsp/inference/tree_reweighted.hpp"

#include <numeric>
#include <random>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Example n's pairwise factors as a multigraph on its variables (local indices), with each
// variable's incident edges in CSR form for the random walks.
struct PairGraph {
  std::vector<int64_t> factor;        // [edges] the factor index within the example
  std::vector<int64_t> end0, end1;    // [edges]
  std::vector<int64_t> incident_ptr;  // [vars + 1]
  std::vector<int64_t> incident;      // edge indices
  int64_t other_end(int64_t e, int64_t v) const { return end0[e] == v ? end1[e] : end0[e]; }
};

PairGraph pair_graph(const Dataset& data, int64_t n, const std::string& source) {
  const int64_t first_var = data.var_offset[n], vars = data.var_offset[n + 1] - first_var;
  const int64_t first_factor = data.factor_offset[n];
  PairGraph g;
  std::vector<int64_t> degree(static_cast<size_t>(vars), 0);
  for (int64_t a = first_factor; a < data.factor_offset[n + 1]; ++a) {
    if (data.arity(a) == 1) continue;
    if (data.arity(a) > 2)
      throw InputError(source + ": /factors/var_ptr[" + std::to_string(data.file_factor(a)) +
                       "]: --counting trw needs pairwise factors; this one has " +
                       std::to_string(data.arity(a)) + " variables");
    const int64_t k = data.factor_var_ptr[a];
    g.factor.push_back(a - first_factor);
    g.end0.push_back(data.factor_vars[k] - first_var);
    g.end1.push_back(data.factor_vars[k + 1] - first_var);
    ++degree[g.end0.back()];
    ++degree[g.end1.back()];
  }
  g.incident_ptr.assign(static_cast<size_t>(vars) + 1, 0);
  std::partial_sum(degree.begin(), degree.end(), g.incident_ptr.begin() + 1);
  g.incident.resize(g.factor.size() * 2);
  std::vector<int64_t> next(g.incident_ptr.begin(), g.incident_ptr.end() - 1);
  for (size_t e = 0; e < g.factor.size(); ++e) {
    g.incident[next[g.end0[e]]++] = static_cast<int64_t>(e);
    g.incident[next[g.end1[e]]++] = static_cast<int64_t>(e);
  }
  return g;
}

// [vars] 1 for the first variable of each connected component: the roots the walks head for.
std::vector<uint8_t> component_roots(const PairGraph& g) {
  const int64_t vars = static_cast<int64_t>(g.incident_ptr.size()) - 1;
  std::vector<uint8_t> root(static_cast<size_t>(vars), 0), reached(root.size(), 0);
  std::vector<int64_t> stack;
  for (int64_t first = 0; first < vars; ++first) {
    if (reached[first]) continue;
    root[first] = reached[first] = 1;
    stack.push_back(first);
    while (!stack.empty()) {
      const int64_t v = stack.back();
      stack.pop_back();
      for (int64_t i = g.incident_ptr[v]; i < g.incident_ptr[v + 1]; ++i) {
        const int64_t w = g.other_end(g.incident[i], v);
        if (!reached[w]) reached[w] = 1, stack.push_back(w);
      }
    }
  }
  return root;
}

// Adds one uniform spanning forest (a uniform spanning tree of every component) to `count`:
// Wilson's loop-erased random walks towards the components' roots.
void count_uniform_spanning_forest(const PairGraph& g, const std::vector<uint8_t>& roots,
                                   std::mt19937_64& rng, std::vector<int64_t>& count) {
  const int64_t vars = static_cast<int64_t>(roots.size());
  std::vector<uint8_t> in_tree = roots;
  std::vector<int64_t> step(static_cast<size_t>(vars), -1);  // the edge a walk last left v by
  for (int64_t start = 0; start < vars; ++start) {
    // Walk until the tree is hit; a revisited variable overwrites its step, which erases the
    // loop. Then the walk's path, read along the steps, joins the tree.
    for (int64_t v = start; !in_tree[v];) {
      const int64_t d = g.incident_ptr[v + 1] - g.incident_ptr[v];
      step[v] =
          g.incident[g.incident_ptr[v] + static_cast<int64_t>(rng() % static_cast<uint64_t>(d))];
      v = g.other_end(step[v], v);
    }
    for (int64_t v = start; !in_tree[v]; v = g.other_end(step[v], v)) {
      in_tree[v] = 1;
      ++count[step[v]];
    }
  }
}

// Adds a spanning forest that holds the uncovered edges it can (Kruskal's order: uncovered
// edges first) to `count`. Returns false when every edge is covered and nothing was added.
bool count_covering_forest(const PairGraph& g, std::vector<int64_t>& count) {
  const int64_t vars = static_cast<int64_t>(g.incident_ptr.size()) - 1;
  std::vector<int64_t> order;
  for (size_t e = 0; e < count.size(); ++e)
    if (count[e] == 0) order.push_back(static_cast<int64_t>(e));
  if (order.empty()) return false;
  for (size_t e = 0; e < count.size(); ++e)
    if (count[e] > 0) order.push_back(static_cast<int64_t>(e));
  std::vector<int64_t> parent(static_cast<size_t>(vars));
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int64_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  std::vector<int64_t> added;
  for (const int64_t e : order) {
    const int64_t r0 = root(g.end0[e]), r1 = root(g.end1[e]);
    if (r0 == r1) continue;
    parent[r1] = r0;
    added.push_back(e);
  }
  for (const int64_t e : added) ++count[e];
  return true;
}

}  // namespace

std::vector<double> edge_appearance(const Dataset& data, int64_t n, const std::string& source) {
  const PairGraph g = pair_graph(data, n, source);
  std::vector<int64_t> count(g.factor.size(), 0);
  // splitmix64 of the file's example index: neighbouring examples get unrelated streams.
  uint64_t seed = static_cast<uint64_t>(data.first_example + n) + 0x9e3779b97f4a7c15ull;
  seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ull;
  seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebull;
  std::mt19937_64 rng(seed ^ (seed >> 31));
  int64_t forests = 0;
  if (!g.factor.empty()) {
    const std::vector<uint8_t> roots = component_roots(g);
    for (; forests < kSampledTrees; ++forests) count_uniform_spanning_forest(g, roots, rng, count);
  }
  while (count_covering_forest(g, count)) ++forests;

  std::vector<double> rho(static_cast<size_t>(data.factor_offset[n + 1] - data.factor_offset[n]),
                          1.0);
  for (size_t e = 0; e < g.factor.size(); ++e)
    rho[g.factor[e]] = static_cast<double>(count[e]) / static_cast<double>(forests);
  return rho;
}

}  // namespace pdsp
