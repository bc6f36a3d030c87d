#include "pdsp/features/row_groups.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace pdsp {

RowGroups find_row_groups(const RegionTypes& types, int64_t regions,
                          const std::function<int64_t(int64_t)>& size,
                          const std::function<bool(int64_t)>& may_group) {
  RowGroups groups;
  std::map<std::pair<std::vector<int32_t>, std::vector<int64_t>>, int32_t> known;
  const auto joins = [&](int64_t head, int64_t r) {
    if (!may_group(r) || types.obs_row[r] != types.obs_row[head] ||
        types.dim[types.type[r]] != types.dim[types.type[head]])
      return false;
    for (int64_t i = head; i < r; ++i)
      if (types.type[i] == types.type[r]) return false;
    return true;
  };
  for (int64_t head = 0; head < regions;) {
    int64_t end = head + 1;
    if (may_group(head))
      while (end < regions && joins(head, end)) ++end;
    if (end - head >= 2) {
      RowGroups::Pattern pattern{{}, {0}};
      for (int64_t r = head; r < end; ++r) {
        pattern.types.push_back(types.type[r]);
        pattern.column.push_back(pattern.column.back() + size(r));
      }
      const auto [at, added] = known.try_emplace({pattern.types, pattern.column},
                                                 static_cast<int32_t>(groups.patterns.size()));
      if (added) groups.patterns.push_back(std::move(pattern));
      if (groups.pattern.empty()) {
        groups.pattern.assign(static_cast<size_t>(regions), -1);
        groups.member.assign(static_cast<size_t>(regions), 0);
      }
      for (int64_t r = head; r < end; ++r) {
        groups.pattern[r] = at->second;
        groups.member[r] = static_cast<int32_t>(r - head);
      }
    }
    head = end;
  }
  return groups;
}

}  // namespace pdsp
