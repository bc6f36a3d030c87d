#pragma once
// Index of the edges ("slots") between factors and their variables, built once per data slice.
// Slot e is position k of factor a's variable list (e = factor_var_ptr[a] + k); the message
// lambda_{v->a} of that edge lives at message_offset(e) in one flat arena, so the messages of
// a rank are one array in global example order.
//
// On a regular graph (every factor of the same arity, every variable of the same cardinality:
// grids, chains) the factor, the table stride and the arena offset of a slot follow from its
// number, and the three per-slot arrays are not stored: at 50 million variables they would take
// 2.4 GB. Per-slot values are 32-bit (LocalIndex, see dataset.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

class FactorGraph {
 public:
  enum class Form { Auto, Explicit };  // Explicit: keep the arrays even on a regular graph
  // `source` names the data in the error thrown when the slice is too large.
  explicit FactorGraph(const Dataset& data, const std::string& source = "data set",
                       Form form = Form::Auto);

  int64_t num_slots() const { return num_slots_; }
  int64_t num_message_entries() const { return num_message_entries_; }
  bool is_regular() const { return arity_ > 0; }
  // The factor of slot e, the stride of its variable in that factor's table, and the first
  // entry of its message in the arena (message_offset(num_slots()) is the arena's size).
  int64_t factor_of(int64_t e) const { return arity_ > 0 ? e / arity_ : slot_factor_[e]; }
  int64_t stride_of(int64_t e) const {
    return arity_ > 0 ? regular_stride_[e % arity_] : slot_stride_[e];
  }
  int64_t message_offset(int64_t e) const { return arity_ > 0 ? e * card_ : message_offset_[e]; }
  int64_t degree(int64_t v) const { return var_slot_ptr[v + 1] - var_slot_ptr[v]; }

  std::vector<LocalIndex> var_slot_ptr;  // [vars + 1] CSR: the slots of each variable
  std::vector<LocalIndex> var_slots;     // [slots]
  int64_t max_table = 1;
  int64_t max_card = 1;
  int64_t max_degree = 0;

 private:
  int64_t num_slots_ = 0;
  int64_t num_message_entries_ = 0;
  int64_t arity_ = 0;                       // > 0 on a regular graph: the arity of every factor
  int64_t card_ = 0;                        // the cardinality of every variable of a regular graph
  std::vector<int64_t> regular_stride_;     // [arity] the strides of a regular graph's tables
  std::vector<LocalIndex> slot_factor_;     // [slots], empty on a regular graph
  std::vector<LocalIndex> slot_stride_;     // [slots], empty on a regular graph
  std::vector<LocalIndex> message_offset_;  // [slots + 1], empty on a regular graph
};

// Breadth-first search of example n from the first variable of each component: visit(v, level,
// from, via) for every variable in that order, where `level` counts the steps from its
// component's first variable and v was reached from variable `from` through factor `via` (both
// -1 for a component's first).
template <class Visit>
void breadth_first(const Dataset& data, const FactorGraph& graph, int64_t n, Visit&& visit) {
  const int64_t first = data.var_offset[n], last = data.var_offset[n + 1];
  std::vector<uint8_t> seen(static_cast<size_t>(last - first), 0);
  struct Reached {
    int64_t var, level, from, via;
  };
  std::vector<Reached> queue;
  queue.reserve(seen.size());
  for (int64_t root = first; root < last; ++root) {
    if (seen[root - first]) continue;
    seen[root - first] = 1;
    queue.push_back({root, 0, -1, -1});
    for (size_t i = queue.size() - 1; i < queue.size(); ++i) {
      const Reached r = queue[i];
      visit(r.var, r.level, r.from, r.via);
      for (int64_t k = graph.var_slot_ptr[r.var]; k < graph.var_slot_ptr[r.var + 1]; ++k) {
        const int64_t a = graph.factor_of(graph.var_slots[k]);
        for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e) {
          const int64_t u = data.factor_vars[e];
          if (seen[u - first]) continue;
          seen[u - first] = 1;
          queue.push_back({u, r.level + 1, r.var, a});
        }
      }
    }
  }
}

}  // namespace pdsp
