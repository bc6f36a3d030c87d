#pragma once
// The typed regions of one example (format 2), as the function classes read them: each region's
// kind, type, place in the potential layout and observation row.
#include <cstdint>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

struct TypedRegion {
  bool factor;  // a factor (else a variable)
  int32_t type;
  int64_t position;    // of its first state in the potential layout [states | table entries]
  int32_t size;        // states or table entries
  LocalIndex obs_row;  // -1: none
  int64_t local;       // the variable's or factor's index in the slice
};

// Calls visit(region) for every typed region of example n: its variables, then its factors.
template <class Visit>
void for_each_typed_region(const Dataset& data, int64_t n, Visit&& visit) {
  const auto row_of = [](const RegionTypes& types, int64_t r) {
    return types.obs_row.empty() ? LocalIndex{-1} : types.obs_row[r];
  };
  if (data.var_types.present)
    for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
      if (data.var_types.type[v] >= 0)
        visit(TypedRegion{false, data.var_types.type[v], data.state_offset[v], data.card[v],
                          row_of(data.var_types, v), v});
  if (data.factor_types.present)
    for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a)
      if (data.factor_types.type[a] >= 0)
        visit(TypedRegion{true, data.factor_types.type[a], data.num_states() + data.table_offset[a],
                          static_cast<int32_t>(data.table_offset[a + 1] - data.table_offset[a]),
                          row_of(data.factor_types, a), a});
}

}  // namespace pdsp
