#include "pdsp/inference/forest_map.hpp"

#include <limits>
#include <vector>

namespace pdsp {
namespace {

// The example's variables and factors as a rooted forest: each variable after its parent factor,
// each factor after its parent variable (preorder), ready for a pass up (reversed) and one down.
struct RootedForest {
  struct Node {
    bool is_factor;
    int64_t id;      // local variable id, or factor id
    int64_t parent;  // for a factor: its parent variable; for a variable: its parent factor or -1
  };
  std::vector<Node> preorder;
};

RootedForest root_forest(const Dataset& data, int64_t n) {
  const int64_t first_var = data.var_offset[n], vars = data.var_offset[n + 1] - first_var;
  // The factors of each variable of the example (compressed rows).
  std::vector<int64_t> start(static_cast<size_t>(vars + 1), 0), factors;
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a)
    for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
      ++start[data.factor_vars[k] - first_var + 1];
  for (int64_t v = 0; v < vars; ++v) start[v + 1] += start[v];
  factors.resize(static_cast<size_t>(start[vars]));
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a)
    for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
      factors[fill[data.factor_vars[k] - first_var]++] = a;

  RootedForest forest;
  std::vector<bool> seen(static_cast<size_t>(vars), false);
  std::vector<RootedForest::Node> stack;
  for (int64_t root = 0; root < vars; ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    stack.push_back({false, first_var + root, -1});
    while (!stack.empty()) {
      const RootedForest::Node node = stack.back();
      stack.pop_back();
      forest.preorder.push_back(node);
      if (node.is_factor) {
        for (int64_t k = data.factor_var_ptr[node.id]; k < data.factor_var_ptr[node.id + 1]; ++k)
          if (data.factor_vars[k] != node.parent) {
            seen[data.factor_vars[k] - first_var] = true;
            stack.push_back({false, data.factor_vars[k], node.id});
          }
      } else {
        const int64_t v = node.id - first_var;
        for (int64_t i = start[v]; i < start[v + 1]; ++i)
          if (factors[i] != node.parent) stack.push_back({true, factors[i], node.id});
      }
    }
  }
  return forest;
}

// The state of scope position k in joint state j of factor a (row-major, last variable fastest).
int32_t state_in(const Dataset& data, int64_t a, int64_t k, int64_t j) {
  const int64_t slot = data.factor_var_ptr[a] + k;
  for (int64_t m = data.factor_var_ptr[a + 1] - 1; m > slot; --m)
    j /= data.card[data.factor_vars[m]];
  return static_cast<int32_t>(j % data.card[data.factor_vars[slot]]);
}

}  // namespace

void forest_map(const Dataset& data, int64_t n, std::span<const double> potential,
                std::span<int32_t> labels) {
  const RootedForest forest = root_forest(data, n);
  const int64_t states = data.num_states();
  const int64_t first_state = data.state_offset[data.var_offset[n]];
  // score[s]: a variable's potential plus the best its subtree below adds, per state.
  std::vector<double> score(potential.begin() + first_state,
                            potential.begin() + data.state_offset[data.var_offset[n + 1]]);
  // For each factor and each state of its parent variable, the best joint state.
  const int64_t first_factor = data.factor_offset[n];
  std::vector<std::vector<int64_t>> best(
      static_cast<size_t>(data.factor_offset[n + 1] - first_factor));

  for (auto node = forest.preorder.rbegin(); node != forest.preorder.rend(); ++node) {
    if (!node->is_factor) continue;  // its score is complete: its child factors came first
    const int64_t a = node->id, parent = node->parent;
    const int64_t entries = data.table_offset[a + 1] - data.table_offset[a];
    int64_t parent_position = data.factor_var_ptr[a];
    while (data.factor_vars[parent_position] != parent) ++parent_position;
    const int64_t position = parent_position - data.factor_var_ptr[a];
    std::vector<double> message(static_cast<size_t>(data.card[parent]),
                                -std::numeric_limits<double>::infinity());
    std::vector<int64_t>& argmax = best[a - first_factor];
    argmax.assign(message.size(), 0);
    for (int64_t j = 0; j < entries; ++j) {
      double value = potential[states + data.table_offset[a] + j];
      for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
        if (k != parent_position) {
          const int64_t w = data.factor_vars[k];
          value += score[data.state_offset[w] - first_state +
                         state_in(data, a, k - data.factor_var_ptr[a], j)];
        }
      const int32_t s = state_in(data, a, position, j);
      if (value > message[s]) {
        message[s] = value;
        argmax[s] = j;
      }
    }
    for (int32_t s = 0; s < data.card[parent]; ++s)
      score[data.state_offset[parent] - first_state + s] += message[s];
  }

  for (const RootedForest::Node& node : forest.preorder) {
    if (node.is_factor) {
      const int64_t j = best[node.id - first_factor][labels[node.parent]];
      for (int64_t k = data.factor_var_ptr[node.id]; k < data.factor_var_ptr[node.id + 1]; ++k)
        if (data.factor_vars[k] != node.parent)
          labels[data.factor_vars[k]] =
              state_in(data, node.id, k - data.factor_var_ptr[node.id], j);
    } else if (node.parent < 0) {  // a root: the best state of its whole tree's score
      const int64_t v = node.id, offset = data.state_offset[v] - first_state;
      int32_t chosen = 0;
      for (int32_t s = 1; s < data.card[v]; ++s)
        if (score[offset + s] > score[offset + chosen]) chosen = s;
      labels[v] = chosen;
    }
  }
}

}  // namespace pdsp
