#pragma once
// Runs of consecutive regions that read one observation row, such as yeast's 14 labels of one
// instance. A group's potentials are one product of the row with the parameters of all its
// regions side by side, and its moments one pass over the row that adds to all of them: the
// loops run over the group's states (28 on yeast) instead of the two states of each region, and
// the row is read once instead of once per region and state.
#include <cstdint>
#include <functional>
#include <vector>

#include "pdsp/data/typed_features.hpp"

namespace pdsp {

struct RowGroups {
  // The types and sizes of a group's regions, in order; groups with the same pattern share one
  // layout of their parameters.
  struct Pattern {
    std::vector<int32_t> types;
    std::vector<int64_t> column;  // [members + 1] where each member's states start
    int64_t width() const { return column.back(); }
    int64_t members() const { return static_cast<int64_t>(types.size()); }
  };
  std::vector<Pattern> patterns;
  // Per region, empty when there is no group: its group's pattern (-1: in no group) and its place
  // in the group.
  std::vector<int32_t> pattern;
  std::vector<int32_t> member;

  bool in_group(int64_t r) const { return !pattern.empty() && pattern[r] >= 0; }
};

// Groups of at least two consecutive regions that `may_group`, read the same observation row,
// have types of one observation dimension and no type twice (so that no parameter appears twice
// in a pattern's layout). `size(r)` is region r's number of states.
RowGroups find_row_groups(const RegionTypes& types, int64_t regions,
                          const std::function<int64_t(int64_t)>& size,
                          const std::function<bool(int64_t)>& may_group);

}  // namespace pdsp
