#include "pdsp/inference/colouring.hpp"

#include <algorithm>

#include "pdsp/inference/kernels.hpp"

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

// One class for example n: each of its trees in reverse breadth-first order, then in
// breadth-first order (colour_variables).
void add_tree_class(Colouring& result, const Dataset& data, const FactorGraph& graph, int64_t n) {
  std::vector<LocalIndex> bfs;
  std::vector<size_t> tree_start;
  breadth_first(data, graph, n, [&](int64_t v, int64_t level, int64_t, int64_t) {
    if (level == 0) tree_start.push_back(bfs.size());
    bfs.push_back(static_cast<LocalIndex>(v));
  });
  tree_start.push_back(bfs.size());
  for (size_t t = 0; t + 1 < tree_start.size(); ++t) {
    const auto begin = bfs.begin() + static_cast<std::ptrdiff_t>(tree_start[t]);
    const auto end = bfs.begin() + static_cast<std::ptrdiff_t>(tree_start[t + 1]);
    result.order.insert(result.order.end(), std::make_reverse_iterator(end),
                        std::make_reverse_iterator(begin));
    result.order.insert(result.order.end(), begin, end);
  }
  result.class_ptr.push_back(static_cast<int64_t>(result.order.size()));
  result.example_class_ptr.push_back(static_cast<int64_t>(result.class_ptr.size()) - 1);
}

}  // namespace

Colouring colour_variables(const Dataset& data, const FactorGraph& graph,
                           std::span<const uint8_t> along_tree) {
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
  result.along_tree.assign(along_tree.begin(), along_tree.end());
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    if (!along_tree.empty() && along_tree[n]) {
      add_tree_class(result, data, graph, n);
      continue;
    }
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

int64_t tree_depth(const Dataset& data, const FactorGraph& graph, int64_t n) {
  int64_t depth = 0;
  breadth_first(data, graph, n,
                [&](int64_t, int64_t level, int64_t, int64_t) { depth = std::max(depth, level); });
  return depth;
}

ExampleChunks chunk_classes(const Colouring& colouring, const FactorGraph& graph) {
  ExampleChunks result;
  result.order = colouring.order;
  const int64_t examples = static_cast<int64_t>(colouring.example_class_ptr.size()) - 1;
  for (int64_t n = 0; n < examples; ++n) {
    for (int64_t c = colouring.example_class_ptr[n]; c < colouring.example_class_ptr[n + 1]; ++c) {
      const int64_t end = colouring.class_ptr[c + 1];
      int64_t begin = colouring.class_ptr[c];
      int64_t slots = 0;
      for (int64_t i = begin; i < end; ++i) {
        const LocalIndex v = result.order[i];
        const int64_t degree = graph.degree(v);
        // Per-variable lanes (mean field) need the count bounded too: isolated variables.
        if (i > begin && (slots + degree > kChunkSlots || i - begin == kChunkSlots)) {
          result.ranges.emplace_back(begin, i);
          begin = i;
          slots = 0;
        }
        slots += degree;
      }
      if (begin < end) result.ranges.emplace_back(begin, end);
    }
    result.example_ptr.push_back(static_cast<int64_t>(result.ranges.size()));
  }
  return result;
}

}  // namespace pdsp
