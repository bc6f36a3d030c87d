#include "pdsp/inference/factor_graph.hpp"

#include <algorithm>
#include <limits>

#include "pdsp/data/errors.hpp"

namespace pdsp {

namespace {

void check_fits_slot_index(int64_t count, const char* what, const std::string& source) {
  if (count > std::numeric_limits<SlotIndex>::max())
    throw InputError(source + ": this rank's slice has " + std::to_string(count) + " " + what +
                     ", more than the 2^31 - 1 one rank can index: run on more ranks");
}

}  // namespace

FactorGraph::FactorGraph(const Dataset& data, const std::string& source) {
  const int64_t slots = static_cast<int64_t>(data.factor_vars.size());
  const int64_t vars = data.num_vars();
  check_fits_slot_index(slots, "factor-variable edges", source);
  check_fits_slot_index(data.num_factors(), "factors", source);
  int64_t entries = 0;
  for (int64_t v : data.factor_vars) entries += data.card[v];
  check_fits_slot_index(entries, "message entries", source);
  slot_factor.resize(static_cast<size_t>(slots));
  slot_stride.resize(static_cast<size_t>(slots));
  message_offset.assign(static_cast<size_t>(slots) + 1, 0);
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    int64_t stride = 1;
    for (int64_t e = data.factor_var_ptr[a + 1] - 1; e >= data.factor_var_ptr[a]; --e) {
      slot_factor[e] = static_cast<SlotIndex>(a);
      slot_stride[e] = static_cast<SlotIndex>(stride);
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
  for (int64_t e = 0; e < slots; ++e)
    var_slots[fill[data.factor_vars[e]]++] = static_cast<SlotIndex>(e);

  for (int64_t v = 0; v < vars; ++v) {
    max_card = std::max<int64_t>(max_card, data.card[v]);
    max_degree = std::max(max_degree, degree(v));
  }
}

}  // namespace pdsp
