#include "pdsp/data/dataset.hpp"

namespace pdsp {

void Dataset::rebuild_offsets() {
  state_offset.assign(card.size() + 1, 0);
  for (size_t v = 0; v < card.size(); ++v) state_offset[v + 1] = state_offset[v] + card[v];
  const int64_t factors = num_factors();
  table_offset.assign(static_cast<size_t>(factors) + 1, 0);
  for (int64_t a = 0; a < factors; ++a) {
    int64_t size = 1;
    for (int64_t k = factor_var_ptr[a]; k < factor_var_ptr[a + 1]; ++k)
      size *= card[factor_vars[k]];
    table_offset[a + 1] = table_offset[a] + size;
  }
}

}  // namespace pdsp
