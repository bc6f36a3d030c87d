#pragma once
// How one sweep or one evaluation of a rank's examples is cut into chunks. Each example has a
// sequence of phases; the chunks of one phase are independent of each other (a colour class of
// a sweep; the factors, then the variables of an evaluation) and may run on different threads.
// Chunk boundaries depend on the data only, so per-chunk results combined in chunk order are the
// same for any thread count.
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

struct WorkPlan {
  struct Chunk {
    int64_t begin;
    int64_t end;
  };
  std::vector<Chunk> chunks;
  std::vector<int64_t> phase_ptr{0};          // [phases + 1] chunks of each phase
  std::vector<int64_t> example_phase_ptr{0};  // [examples + 1] phases of each example

  int64_t num_chunks() const { return static_cast<int64_t>(chunks.size()); }
};

// Phases are the colour classes; a chunk is a range of Colouring::order holding at most
// kChunkSlots message blocks (or one variable of larger degree).
WorkPlan plan_sweep(const Colouring& colouring, const FactorGraph& graph);
// Two phases per example, ranges of its factors and ranges of its variables, at most
// kChunkRegions regions per chunk: factors first, or variables first (the kernels say which
// beliefs the other kind reads, see Kernels::variables_first).
WorkPlan plan_evaluation(const Dataset& data, bool variables_first);

}  // namespace pdsp
