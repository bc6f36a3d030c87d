#include "pdsp/inference/colouring.hpp"

#include <algorithm>

namespace pdsp {
namespace {

// Adds the classes of variables [first, last), coloured `colour[v]` in [0, colours), to `result`
// by a counting sort, which keeps variable order inside a class. Empty classes stay: a shard
// has the classes of its whole example, some of which may hold none of its variables.
void add_classes(Colouring& result, const int32_t* colour, int64_t first, int64_t last,
                 int32_t colours) {
  const int64_t start = static_cast<int64_t>(result.order.size());
  std::vector<int64_t> fill(static_cast<size_t>(colours) + 1, 0);
  for (int64_t v = first; v < last; ++v) ++fill[colour[v] + 1];
  for (int32_t c = 0; c < colours; ++c) {
    fill[c + 1] += fill[c];
    result.class_ptr.push_back(start + fill[c + 1]);
  }
  result.order.resize(static_cast<size_t>(start + last - first));
  for (int64_t v = first; v < last; ++v)
    result.order[start + fill[colour[v]]++] = static_cast<LocalIndex>(v);
  result.example_class_ptr.push_back(static_cast<int64_t>(result.class_ptr.size()) - 1);
}

}  // namespace

Colouring colour_variables(const Dataset& data, const FactorGraph& graph) {
  Colouring result;
  result.example_class_ptr.assign(1, 0);
  if (data.shard) {
    // The whole example's colouring, which select_shard kept: the shards sweep it class by class,
    // each class's boundary variables first, so that their messages travel while the interior
    // is updated.
    add_classes(result, data.shard->colour.data(), 0, data.owned_vars(), data.shard->colours);
    std::vector<uint8_t> boundary(static_cast<size_t>(data.owned_vars()), 0);
    for (const ShardNeighbour& neighbour : data.shard->neighbours)
      for (LocalIndex v : neighbour.send_vars) boundary[v] = 1;
    for (int64_t c = 0; c + 1 < static_cast<int64_t>(result.class_ptr.size()); ++c) {
      const auto first = result.order.begin() + result.class_ptr[c];
      const auto last = result.order.begin() + result.class_ptr[c + 1];
      const auto end =
          std::stable_partition(first, last, [&](LocalIndex v) { return boundary[v]; });
      result.class_boundary_end.push_back(end - result.order.begin());
    }
    return result;
  }
  const int64_t vars = data.num_vars();
  std::vector<int32_t> colour(static_cast<size_t>(vars), -1);
  // taken_by[c] == v marks colour c as used by a neighbour of v; it never needs clearing.
  std::vector<int64_t> taken_by;
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    int32_t colours = 0;
    for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v) {
      for (int64_t i = graph.var_slot_ptr[v]; i < graph.var_slot_ptr[v + 1]; ++i) {
        const int64_t a = graph.factor_of(graph.var_slots[i]);
        for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e) {
          const int32_t c = colour[data.factor_vars[e]];
          if (c >= 0) taken_by[c] = v;
        }
      }
      int32_t c = 0;
      while (c < colours && taken_by[c] == v) ++c;
      if (c == colours) {
        ++colours;
        if (taken_by.size() < static_cast<size_t>(colours)) taken_by.push_back(-1);
      }
      colour[v] = c;
    }
    add_classes(result, colour.data(), data.var_offset[n], data.var_offset[n + 1], colours);
  }
  return result;
}

}  // namespace pdsp
