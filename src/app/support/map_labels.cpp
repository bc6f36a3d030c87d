#include "pdsp/app/map_labels.hpp"

#include "pdsp/data/allocation.hpp"
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
                                      std::span<const double> base,
                                      const SharedPairwiseTables& shared) {
  // Zeroed pages cost memory only once written, and the skipped tables never are.
  ZeroedArray<double> potential = allocate_zeroed<double>(
      slice.source(), "the MAP potentials", slice.num_states() + slice.num_table_entries());
  const std::span<double> all(potential.data(), potential.size());
  model.forward(theta, base, all, shared.others());
  std::vector<int32_t> labels(static_cast<size_t>(slice.owned_vars()), 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t n = 0; n < slice.num_examples(); ++n)
    forest_map(slice, graph, n, all, labels, &shared);
  return labels;
}

}  // namespace pdsp
