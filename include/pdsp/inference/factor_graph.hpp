#pragma once
// Index of the edges ("slots") between factors and their variables, built once per data slice.
// Slot e is position k of factor a's variable list (e = factor_var_ptr[a] + k); the message
// lambda_{v->a} of that edge lives at message_offset[e] in one flat arena, so the messages of
// a rank are one array in global example order.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

// Per-slot arrays hold 32-bit values: they are the largest index arrays of a rank, and halving
// them matters at 50 million variables. A rank's slice may therefore hold at most 2^31 - 1
// slots, factors and message entries (the constructor says so and names the data set);
// larger problems run on more ranks.
using SlotIndex = int32_t;

struct FactorGraph {
  // `source` names the data in the error thrown when the slice is too large.
  explicit FactorGraph(const Dataset& data, const std::string& source = "data set");

  std::vector<SlotIndex> slot_factor;     // [slots] factor of each slot
  std::vector<SlotIndex> slot_stride;     // [slots] stride of the slot's variable in its table
  std::vector<SlotIndex> message_offset;  // [slots + 1]
  std::vector<int64_t> var_slot_ptr;      // [vars + 1] CSR: the slots of each variable
  std::vector<SlotIndex> var_slots;       // [slots]
  int64_t max_table = 1;
  int64_t max_card = 1;
  int64_t max_degree = 0;

  int64_t num_slots() const { return static_cast<int64_t>(slot_factor.size()); }
  int64_t num_message_entries() const { return message_offset.back(); }
  int64_t degree(int64_t v) const { return var_slot_ptr[v + 1] - var_slot_ptr[v]; }
};

}  // namespace pdsp
