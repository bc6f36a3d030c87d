#include "pdsp/inference/forest_map.hpp"

#include <limits>
#include <vector>

namespace pdsp {
namespace {

// The state of slot e's variable in joint state j of its factor's table.
int32_t state_at(const Dataset& data, const FactorGraph& graph, int64_t e, int64_t j) {
  return static_cast<int32_t>(j / graph.stride_of(e) % data.card[data.factor_vars[e]]);
}

// The slot of variable v in factor a's scope.
int64_t slot_of(const Dataset& data, int64_t a, int64_t v) {
  int64_t slot = data.factor_var_ptr[a];
  while (data.factor_vars[slot] != v) ++slot;
  return slot;
}

// The up message of pairwise factor a to the variable of `parent_slot`, as the general loop of
// forest_map computes it (the same entries in the same order per parent state, so the same
// ties), without its divisions per entry: the OCR and citation chains' tables are 26 x 26 and
// 76 x 76, and the divisions took most of `predict`'s decoding. `score` is forest_map's, whose
// first entry is state `first_state`.
void pairwise_message(const Dataset& data, const FactorGraph& graph, int64_t a, int64_t parent_slot,
                      const double* table, const std::vector<double>& score, int64_t first_state,
                      std::vector<double>& message, std::vector<int64_t>& argmax) {
  const int64_t first = data.factor_var_ptr[a];
  const int64_t other_slot = parent_slot == first ? first + 1 : first;
  const int64_t other = data.factor_vars[other_slot];
  const int64_t parent_stride = graph.stride_of(parent_slot);
  const int64_t other_stride = graph.stride_of(other_slot);
  const double* other_score = score.data() + (data.state_offset[other] - first_state);
  for (size_t s = 0; s < message.size(); ++s) {
    const int64_t row = static_cast<int64_t>(s) * parent_stride;
    for (int32_t t = 0; t < data.card[other]; ++t) {
      const double value = table[row + t * other_stride] + other_score[t];
      if (value > message[s]) {
        message[s] = value;
        argmax[s] = row + t * other_stride;
      }
    }
  }
}

}  // namespace

void forest_map(const Dataset& data, const FactorGraph& graph, int64_t n,
                std::span<const double> potential, std::span<int32_t> labels,
                const SharedPairwiseTables* shared) {
  struct Reached {
    int64_t var, from, via;
  };
  std::vector<Reached> order;  // breadth-first: each variable after the one it was reached from
  breadth_first(data, graph, n, [&](int64_t v, int64_t, int64_t from, int64_t via) {
    order.push_back({v, from, via});
  });
  const int64_t states = data.num_states();
  const int64_t first_state = data.state_offset[data.var_offset[n]];
  const int64_t first_factor = data.factor_offset[n];
  // score: each variable's potential plus the best its subtree adds, per state. A factor over
  // one variable is part of that variable's potential.
  std::vector<double> score(potential.begin() + first_state,
                            potential.begin() + data.state_offset[data.var_offset[n + 1]]);
  // children[a]: the variables factor a has yet to hear from before it tells its parent.
  std::vector<int64_t> children(static_cast<size_t>(data.factor_offset[n + 1] - first_factor));
  for (int64_t a = first_factor; a < data.factor_offset[n + 1]; ++a) {
    children[a - first_factor] = data.arity(a) - 1;
    if (data.arity(a) > 1) continue;
    const int64_t v = data.factor_vars[data.factor_var_ptr[a]];
    for (int32_t s = 0; s < data.card[v]; ++s)
      score[data.state_offset[v] - first_state + s] += potential[states + data.table_offset[a] + s];
  }
  // best[a][s]: factor a's best joint state when its parent variable is in state s.
  std::vector<std::vector<int64_t>> best(children.size());

  // Up, deepest first: a factor's children (one level below its parent) are complete, their own
  // subtrees lying deeper still, once the last of them in this order has been reached.
  for (auto r = order.rbegin(); r != order.rend(); ++r) {
    if (r->via < 0 || --children[r->via - first_factor] > 0) continue;
    const int64_t a = r->via, parent = r->from;
    std::vector<double> message(static_cast<size_t>(data.card[parent]),
                                -std::numeric_limits<double>::infinity());
    std::vector<int64_t>& argmax = best[a - first_factor];
    argmax.assign(message.size(), 0);
    const int64_t parent_slot = slot_of(data, a, parent);
    const double* table =
        potential.data() + states + data.table_offset[shared ? shared->representative(a) : a];
    if (data.arity(a) == 2) {
      pairwise_message(data, graph, a, parent_slot, table, score, first_state, message, argmax);
    } else {
      for (int64_t j = 0; j < data.table_offset[a + 1] - data.table_offset[a]; ++j) {
        double value = table[j];
        for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
          if (e != parent_slot)
            value += score[data.state_offset[data.factor_vars[e]] - first_state +
                           state_at(data, graph, e, j)];
        const int32_t s = state_at(data, graph, parent_slot, j);
        if (value > message[s]) {
          message[s] = value;
          argmax[s] = j;
        }
      }
    }
    for (int32_t s = 0; s < data.card[parent]; ++s)
      score[data.state_offset[parent] - first_state + s] += message[s];
  }

  // Down: each tree's first variable takes its best state, every other variable its state in
  // the best joint state of the factor it was reached through, given the variable before.
  for (const Reached& r : order) {
    if (r.via < 0) {
      const int64_t offset = data.state_offset[r.var] - first_state;
      int32_t chosen = 0;
      for (int32_t s = 1; s < data.card[r.var]; ++s)
        if (score[offset + s] > score[offset + chosen]) chosen = s;
      labels[r.var] = chosen;
    } else {
      labels[r.var] = state_at(data, graph, slot_of(data, r.via, r.var),
                               best[r.via - first_factor][labels[r.from]]);
    }
  }
}

}  // namespace pdsp
