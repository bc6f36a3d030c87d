#pragma once
// Prediction's exact MAP labels on data without cycles: the potentials at theta through the
// model, then max-sum dynamic programming on each example (forest_map.hpp), instead of
// max-product sweeps at eps = 0, which on chains can run to their sweep limit short of --tol.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/shared_tables.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// The examples with a cycle on all ranks of `comm` (collective); a shard of a split example
// counts as one, since dynamic programming needs whole examples.
int64_t examples_with_a_cycle(const Dataset& slice, Communicator& comm);

// The MAP labelling of every example of `slice` (none with a cycle) under u = base + f(theta),
// `base` empty or one value per state: one label per own variable. The factors that share their
// type's table (`shared`: the problem's, shared_tables.hpp) read it at its representative, and
// their own tables are never written: a chain data set's potentials then hold one transition
// table, not one per factor (on the citations' test set 404 MB).
std::vector<int32_t> exact_map_labels(const Dataset& slice, const FactorGraph& graph,
                                      const PotentialModel& model, std::span<const double> theta,
                                      std::span<const double> base,
                                      const SharedPairwiseTables& shared);

}  // namespace pdsp
