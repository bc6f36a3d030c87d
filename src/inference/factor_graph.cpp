#include "pdsp/inference/factor_graph.hpp"

#include <algorithm>

namespace pdsp {

FactorGraph::FactorGraph(const Dataset& data) {
  const int64_t slots = static_cast<int64_t>(data.factor_vars.size());
  const int64_t vars = data.num_vars();
  slot_factor.resize(static_cast<size_t>(slots));
  slot_stride.resize(static_cast<size_t>(slots));
  message_offset.assign(static_cast<size_t>(slots) + 1, 0);
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    int64_t stride = 1;
    for (int64_t e = data.factor_var_ptr[a + 1] - 1; e >= data.factor_var_ptr[a]; --e) {
      slot_factor[e] = a;
      slot_stride[e] = stride;
      stride *= data.card[data.factor_vars[e]];
    }
    max_table = std::max(max_table, stride);
  }
  for (int64_t e = 0; e < slots; ++e)
    message_offset[e + 1] = message_offset[e] + data.card[data.factor_vars[e]];

  var_slot_ptr.assign(static_cast<size_t>(vars) + 1, 0);
  for (int64_t e = 0; e < slots; ++e) ++var_slot_ptr[data.factor_vars[e] + 1];
  for (int64_t v = 0; v < vars; ++v) var_slot_ptr[v + 1] += var_slot_ptr[v];
  var_slots.resize(static_cast<size_t>(slots));
  std::vector<int64_t> fill(var_slot_ptr.begin(), var_slot_ptr.end() - 1);
  for (int64_t e = 0; e < slots; ++e) var_slots[fill[data.factor_vars[e]]++] = e;

  for (int64_t v = 0; v < vars; ++v) {
    max_card = std::max<int64_t>(max_card, data.card[v]);
    max_degree = std::max(max_degree, degree(v));
  }
}

}  // namespace pdsp
