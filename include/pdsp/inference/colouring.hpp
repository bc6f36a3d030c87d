#pragma once
// A colouring of each example's variable interaction graph (two variables interact when they
// share a factor). Variables of one colour never read each other's messages in their block
// updates (design.md §3), so a colour class can be updated in any order, by SIMD lanes or by
// several threads, with the same result as updating it one variable at a time. Sweeps visit the
// colour classes of an example in order; that schedule is what makes results independent of the
// thread count even inside one example. The exception is the one class of an example swept
// along its trees (below), whose variables must be updated in order, one after the other.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

struct Colouring {
  // Variables grouped by example, then colour: each once, or twice in a class along a tree.
  std::vector<LocalIndex> order;
  std::vector<int64_t> class_ptr{0};       // [classes + 1] class c is order[class_ptr[c]..)
  std::vector<int64_t> example_class_ptr;  // [examples + 1] classes of example n
  // On a shard: [classes] the end of each class's boundary variables (those in cut factors),
  // which come first in the class; empty otherwise.
  std::vector<int64_t> class_boundary_end;
  // [examples] 1 for an example swept along its trees (colour_variables): its one class lists
  // variables that must be updated one after the other, in order; empty when there is none.
  std::vector<uint8_t> along_tree;

  int64_t num_classes(int64_t n) const { return example_class_ptr[n + 1] - example_class_ptr[n]; }
  std::span<const LocalIndex> members(int64_t c) const {
    return std::span<const LocalIndex>(order).subspan(class_ptr[c],
                                                      class_ptr[c + 1] - class_ptr[c]);
  }
};

// Greedy colouring in variable order: each variable takes the smallest colour none of its
// already coloured neighbours has. On a 4-connected grid stored row by row this is the
// checkerboard (2 colours); in general it uses at most (largest neighbourhood + 1) colours.
//
// The examples with along_tree[n] != 0 (no cycle; the caller makes sure that the kernels update
// a chunk's variables one after the other) get one class instead, which plan_sweep keeps in one
// chunk: each tree of the example in reverse
// breadth-first order from its first variable, then in breadth-first order. Updated in that order
// the messages flow from the leaves to the root and back, as in forward-backward: with Bethe
// numbers one sweep reaches the fixed point from any messages (every variable is updated twice).
Colouring colour_variables(const Dataset& data, const FactorGraph& graph,
                           std::span<const uint8_t> along_tree = {});

// The number of breadth-first levels below the first variable of each tree of example n (the
// largest over its trees): how many classes colour-class sweeps need to carry a message from
// that variable to the far end. Meaningful on examples without a cycle.
int64_t tree_depth(const Dataset& data, const FactorGraph& graph, int64_t n);

// Each example's colour classes in chunks of at most kChunkSlots message blocks and variables (a
// variable of more blocks alone): what one call of a vectorised kernel updates, when examples are
// swept one at a time (the likelihood baselines) rather than by a WorkPlan.
struct ExampleChunks {
  std::vector<LocalIndex> order;                    // Colouring::order
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [chunks] ranges of order, in sweep order
  std::vector<int64_t> example_ptr{0};              // [examples + 1] chunks of example n

  std::span<const LocalIndex> chunk(int64_t k) const {
    return std::span<const LocalIndex>(order).subspan(ranges[k].first,
                                                      ranges[k].second - ranges[k].first);
  }
};
ExampleChunks chunk_classes(const Colouring& colouring, const FactorGraph& graph);

}  // namespace pdsp
