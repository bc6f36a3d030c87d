#include "pdsp/inference/work_plan.hpp"

#include <algorithm>

#include "pdsp/inference/kernels.hpp"

namespace pdsp {
namespace {

void close_phase(WorkPlan& plan) {
  plan.phase_ptr.push_back(plan.num_chunks());
}
void close_example(WorkPlan& plan) {
  plan.example_phase_ptr.push_back(static_cast<int64_t>(plan.phase_ptr.size()) - 1);
}

// Cuts [begin, end) into chunks of at most kChunkRegions.
void add_ranges(WorkPlan& plan, int64_t begin, int64_t end) {
  for (int64_t first = begin; first < end; first += kChunkRegions)
    plan.chunks.push_back({first, std::min(end, first + kChunkRegions)});
  close_phase(plan);
}

}  // namespace

WorkPlan plan_sweep(const Colouring& colouring, const FactorGraph& graph) {
  WorkPlan plan;
  const int64_t examples = static_cast<int64_t>(colouring.example_class_ptr.size()) - 1;
  for (int64_t n = 0; n < examples; ++n) {
    for (int64_t c = colouring.example_class_ptr[n]; c < colouring.example_class_ptr[n + 1]; ++c) {
      int64_t begin = colouring.class_ptr[c];
      int64_t slots = 0;
      for (int64_t i = begin; i < colouring.class_ptr[c + 1]; ++i) {
        const int64_t degree = graph.degree(colouring.order[i]);
        if (i > begin && slots + degree > kChunkSlots) {
          plan.chunks.push_back({begin, i});
          begin = i;
          slots = 0;
        }
        slots += degree;
      }
      plan.chunks.push_back({begin, colouring.class_ptr[c + 1]});
      close_phase(plan);
    }
    close_example(plan);
  }
  return plan;
}

WorkPlan plan_evaluation(const Dataset& data, bool variables_first) {
  WorkPlan plan;
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    if (variables_first) add_ranges(plan, data.var_offset[n], data.var_offset[n + 1]);
    add_ranges(plan, data.factor_offset[n], data.factor_offset[n + 1]);
    if (!variables_first) add_ranges(plan, data.var_offset[n], data.var_offset[n + 1]);
    close_example(plan);
  }
  return plan;
}

}  // namespace pdsp
