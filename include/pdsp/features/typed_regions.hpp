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

namespace detail {
inline LocalIndex typed_obs_row(const RegionTypes& types, int64_t r) {
  return types.obs_row.empty() ? LocalIndex{-1} : types.obs_row[r];
}
// Calls visit(region) for the typed factors [first, last).
template <class Visit>
void visit_typed_factors(const Dataset& data, int64_t first, int64_t last, Visit&& visit) {
  if (!data.factor_types.present) return;
  for (int64_t a = first; a < last; ++a)
    if (data.factor_types.type[a] >= 0)
      visit(TypedRegion{true, data.factor_types.type[a], data.num_states() + data.table_offset[a],
                        static_cast<int32_t>(data.table_offset[a + 1] - data.table_offset[a]),
                        typed_obs_row(data.factor_types, a), a});
}
}  // namespace detail

// Calls visit(region) for every typed region of example n: its variables, then its factors.
template <class Visit>
void for_each_typed_region(const Dataset& data, int64_t n, Visit&& visit) {
  if (data.var_types.present)
    for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
      if (data.var_types.type[v] >= 0)
        visit(TypedRegion{false, data.var_types.type[v], data.state_offset[v], data.card[v],
                          detail::typed_obs_row(data.var_types, v), v});
  detail::visit_typed_factors(data, data.factor_offset[n], data.factor_offset[n + 1], visit);
}

// Calls visit(region) for a shard's copies of cut factors, which lie past the examples' ranges:
// the shard's own variables read their potentials in every sweep, so a function class writes
// them too (the copies' beliefs and truths are 0 in the moments, so they add no gradient). The
// halo's variables are other shards' to update and need none.
template <class Visit>
void for_each_copied_typed_factor(const Dataset& data, Visit&& visit) {
  detail::visit_typed_factors(data, data.owned_factors(), data.num_factors(), visit);
}

}  // namespace pdsp
