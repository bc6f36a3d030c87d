#include "pdsp/features/ground_truth.hpp"

#include <algorithm>

namespace pdsp {

ZeroedArray<double> GroundTruth::indicator() const {
  ZeroedArray<double> weight(static_cast<size_t>(num_positions));
  for (const std::vector<int64_t>* positions : {&state, &entry})
    for (int64_t i : *positions)
      if (i != kNone) weight[i] = 1.0;
  return weight;
}

GroundTruth ground_truth(const Dataset& data, const FactorGraph& graph) {
  GroundTruth truth;
  truth.num_positions = data.num_states() + data.num_table_entries();
  truth.state.resize(static_cast<size_t>(data.owned_vars()));
  for (int64_t v = 0; v < data.owned_vars(); ++v)
    truth.state[v] = data.label[v] >= 0 ? data.state_offset[v] + data.label[v] : GroundTruth::kNone;
  truth.entry.resize(static_cast<size_t>(data.owned_factors()));
  for (int64_t a = 0; a < data.owned_factors(); ++a) {
    const auto first = data.factor_vars.begin() + data.factor_var_ptr[a];
    const auto last = data.factor_vars.begin() + data.factor_var_ptr[a + 1];
    if (!std::all_of(first, last, [&](LocalIndex v) { return data.label[v] >= 0; })) {
      truth.entry[a] = GroundTruth::kNone;
      continue;
    }
    int64_t t = data.table_offset[a];
    for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
      t += data.label[data.factor_vars[e]] * graph.stride_of(e);
    truth.entry[a] = data.num_states() + t;
  }
  return truth;
}

}  // namespace pdsp
