#include "pdsp/inference/kernels.hpp"

#include <algorithm>

namespace pdsp {

Workspace::Workspace(const FactorGraph& graph)
    : table(static_cast<size_t>(graph.max_table)),
      mu(static_cast<size_t>(std::max<int64_t>(2, graph.max_degree) * graph.max_card)),
      state(static_cast<size_t>(graph.max_card)),
      sums(static_cast<size_t>(graph.max_card)) {
  // A sweep chunk holds at least one variable, so a variable of larger degree widens it.
  const auto lanes = static_cast<size_t>(std::max({kChunkSlots, kChunkRegions, graph.max_degree}));
  for (ScratchVector* lane : {&lane_a, &lane_b, &lane_c, &lane_d}) lane->resize(lanes);
}

void BeliefTerms::add(const BeliefTerms& other) {
  objective += other.objective;
  dual += other.dual;
  violation = std::max(violation, other.violation);
}

}  // namespace pdsp
