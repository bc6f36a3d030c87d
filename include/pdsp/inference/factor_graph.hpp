#pragma once
// Index of the edges ("slots") between factors and their variables, built once per data slice.
// Slot e is position k of factor a's variable list (e = factor_var_ptr[a] + k); the message
// lambda_{v->a} of that edge lives at message_offset[e] in one flat arena, so the messages of
// a rank are one array in global example order.
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

struct FactorGraph {
  explicit FactorGraph(const Dataset& data);

  std::vector<int64_t> slot_factor;     // [slots] factor of each slot
  std::vector<int64_t> slot_stride;     // [slots] stride of the slot's variable in its table
  std::vector<int64_t> message_offset;  // [slots + 1]
  std::vector<int64_t> var_slot_ptr;    // [vars + 1] CSR: the slots of each variable
  std::vector<int64_t> var_slots;       // [slots]
  int64_t max_table = 1;
  int64_t max_card = 1;
  int64_t max_degree = 0;

  int64_t num_slots() const { return static_cast<int64_t>(slot_factor.size()); }
  int64_t num_message_entries() const { return message_offset.back(); }
  int64_t degree(int64_t v) const { return var_slot_ptr[v + 1] - var_slot_ptr[v]; }
};

}  // namespace pdsp
