#include "pdsp/inference/work_plan.hpp"

#include <algorithm>

#include "pdsp/inference/kernels.hpp"

namespace pdsp {
namespace {

void close_phase(WorkPlan& plan) {
  plan.phase_ptr.push_back(plan.num_chunks());
}
void close_bundle(WorkPlan& plan) {
  plan.bundle_phase_ptr.push_back(static_cast<int64_t>(plan.phase_ptr.size()) - 1);
}

// Cuts [begin, end) into chunks of at most kChunkRegions.
void add_chunks(WorkPlan& plan, int64_t begin, int64_t end) {
  for (int64_t first = begin; first < end; first += kChunkRegions)
    plan.chunks.push_back({first, std::min(end, first + kChunkRegions)});
}
void add_ranges(WorkPlan& plan, int64_t begin, int64_t end) {
  add_chunks(plan, begin, end);
  close_phase(plan);
}
// The factor phase of example n: its factors, and on a shard the copies of cut factors other
// shards own, in chunks of their own (their beliefs are checked against this shard's variables,
// their terms are counted by their owners).
void add_factor_ranges(WorkPlan& plan, const Dataset& data, int64_t n) {
  add_chunks(plan, data.factor_offset[n], data.factor_offset[n + 1]);
  if (data.shard) add_chunks(plan, data.owned_factors(), data.num_factors());
  close_phase(plan);
}

// The examples a plan covers: `subset` in its order, or when it is empty all of them.
class ExampleList {
 public:
  ExampleList(std::span<const int64_t> subset, int64_t all) : subset_(subset), all_(all) {}
  int64_t size() const { return subset_.empty() ? all_ : static_cast<int64_t>(subset_.size()); }
  int64_t operator[](int64_t j) const { return subset_.empty() ? j : subset_[j]; }

 private:
  std::span<const int64_t> subset_;
  int64_t all_;
};

// The end of the bundle that starts at example `first`: the examples after it while their
// variables (variables(n)) add up to at most kBundleVariables; at least `first` itself.
template <class Variables>
int64_t bundle_end(int64_t first, int64_t examples, Variables&& variables) {
  int64_t bundled = variables(first), last = first + 1;
  for (; last < examples && bundled + variables(last) <= kBundleVariables; ++last)
    bundled += variables(last);
  return last;
}

}  // namespace

WorkPlan plan_sweep(const Colouring& colouring, const FactorGraph& graph,
                    std::span<const int64_t> subset) {
  WorkPlan plan;
  const ExampleList list(subset, static_cast<int64_t>(colouring.example_class_ptr.size()) - 1);
  const int64_t examples = list.size();
  const auto variables = [&](int64_t j) {
    const int64_t n = list[j];
    return colouring.class_ptr[colouring.example_class_ptr[n + 1]] -
           colouring.class_ptr[colouring.example_class_ptr[n]];
  };
  // A shard (one example): each class's boundary variables come first, in chunks of their own.
  const bool split = !colouring.class_boundary_end.empty();
  plan.order.reserve(colouring.order.size());
  for (int64_t first = 0, last = 0; first < examples; first = last) {
    last = bundle_end(first, examples, variables);
    int64_t phases = 0;
    for (int64_t j = first; j < last; ++j)
      phases = std::max(phases, colouring.num_classes(list[j]));
    for (int64_t phase = 0; phase < phases; ++phase) {
      auto begin = static_cast<int64_t>(plan.order.size());
      const int64_t first_chunk = plan.num_chunks();
      int64_t interior = -1;  // where a shard's interior variables start in plan.order
      int64_t slots = 0;
      for (int64_t j = first; j < last; ++j) {
        const int64_t n = list[j];
        if (phase >= colouring.num_classes(n)) continue;
        const int64_t c = colouring.example_class_ptr[n] + phase;
        // A class along a tree is never cut: its variables are updated in order.
        const bool in_order = !colouring.along_tree.empty() && colouring.along_tree[n];
        const auto class_start = static_cast<int64_t>(plan.order.size());
        if (split)
          interior = static_cast<int64_t>(plan.order.size()) + colouring.class_boundary_end[c] -
                     colouring.class_ptr[c];
        for (LocalIndex v : colouring.members(c)) {
          const auto i = static_cast<int64_t>(plan.order.size());
          const int64_t degree = graph.degree(v);
          if (i > begin && (slots + degree > kChunkSlots || i == interior) &&
              (!in_order || i == class_start)) {
            plan.chunks.push_back({begin, i});
            begin = i;
            slots = 0;
          }
          slots += degree;
          plan.order.push_back(v);
        }
      }
      plan.chunks.push_back({begin, static_cast<int64_t>(plan.order.size())});
      if (split) {
        int64_t k = first_chunk;
        while (k < plan.num_chunks() && plan.chunks[k].begin < interior) ++k;
        plan.phase_interior.push_back(k);
      }
      close_phase(plan);
    }
    close_bundle(plan);
  }
  return plan;
}

WorkPlan plan_evaluation(const Dataset& data, std::span<const int64_t> subset) {
  WorkPlan plan;
  const ExampleList list(subset, data.num_examples());
  const int64_t examples = list.size();
  const auto variables = [&](int64_t j) {
    return data.var_offset[list[j] + 1] - data.var_offset[list[j]];
  };
  for (int64_t first = 0, last = 0; first < examples; first = last) {
    last = bundle_end(first, examples, variables);
    for (int64_t j = first; j < last; ++j) {
      const int64_t n = list[j];
      add_ranges(plan, data.var_offset[n], data.var_offset[n + 1]);
      add_factor_ranges(plan, data, n);
    }
    close_bundle(plan);
  }
  return plan;
}

}  // namespace pdsp
