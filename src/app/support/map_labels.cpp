#include "pdsp/app/map_labels.hpp"

#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/forest_map.hpp"

namespace pdsp {

int64_t examples_with_a_cycle(const Dataset& slice, Communicator& comm) {
  int64_t cyclic = 0;
  if (slice.shard)
    cyclic = 1;
  else
    for (int64_t n = 0; n < slice.num_examples(); ++n) cyclic += is_acyclic(slice, n) ? 0 : 1;
  comm.allreduce_sum(std::span<int64_t>(&cyclic, 1));
  return cyclic;
}

std::vector<int32_t> exact_map_labels(const Dataset& slice, const FactorGraph& graph,
                                      const PotentialModel& model, std::span<const double> theta,
                                      std::span<const double> base) {
  std::vector<double> potential(
      static_cast<size_t>(slice.num_states() + slice.num_table_entries()));
  model.forward(theta, base, potential);
  std::vector<int32_t> labels(static_cast<size_t>(slice.owned_vars()), 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t n = 0; n < slice.num_examples(); ++n) forest_map(slice, graph, n, potential, labels);
  return labels;
}

}  // namespace pdsp
