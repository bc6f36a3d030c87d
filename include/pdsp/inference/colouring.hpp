#pragma once
// A colouring of each example's variable interaction graph (two variables interact when they
// share a factor). Variables of one colour never read each other's messages in their block
// updates (design.md §3), so a colour class can be updated in any order, by SIMD lanes or by
// several threads, with the same result as updating it one variable at a time. Sweeps visit the
// colour classes of an example in order; that schedule is what makes results independent of the
// thread count even inside one example.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

struct Colouring {
  std::vector<LocalIndex> order;           // [vars] variables grouped by example, then colour
  std::vector<int64_t> class_ptr{0};       // [classes + 1] class c is order[class_ptr[c]..)
  std::vector<int64_t> example_class_ptr;  // [examples + 1] classes of example n
  // On a shard: [classes] the end of each class's boundary variables (those in cut factors),
  // which come first in the class; empty otherwise.
  std::vector<int64_t> class_boundary_end;

  int64_t num_classes(int64_t n) const { return example_class_ptr[n + 1] - example_class_ptr[n]; }
  std::span<const LocalIndex> members(int64_t c) const {
    return std::span<const LocalIndex>(order).subspan(class_ptr[c],
                                                      class_ptr[c + 1] - class_ptr[c]);
  }
};

// Greedy colouring in variable order: each variable takes the smallest colour none of its
// already coloured neighbours has. On a 4-connected grid stored row by row this is the
// checkerboard (2 colours); in general it uses at most (largest neighbourhood + 1) colours.
Colouring colour_variables(const Dataset& data, const FactorGraph& graph);

}  // namespace pdsp
