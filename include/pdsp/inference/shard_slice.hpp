#pragma once
// Cuts the slice one rank holds out of an example split into shards (example_shard.hpp): its own
// variables and factors, the halo, the copies of cut factors, and the lists of what it exchanges
// with each other shard.
#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/shard_partition.hpp"

namespace pdsp {

// `whole` holds the example alone, `graph` and `colouring` are its own, `partition` its split;
// shard `index` lives on rank first_rank + index. `acyclic`: the whole example's factor graph has
// no cycle (the counting numbers decide by it).
Dataset cut_shard(const Dataset& whole, const FactorGraph& graph, const Colouring& colouring,
                  const ShardPartition& partition, bool acyclic, int index, int first_rank);

}  // namespace pdsp
