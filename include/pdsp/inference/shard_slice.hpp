#pragma once
// Which regions one shard of a split example keeps (example_shard.hpp): its own variables and
// factors, the halo, the copies of cut factors, and the lists of what it exchanges with each
// other shard. Decided from the example's structure alone; read_example_regions then reads them.
#include <memory>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/shard_partition.hpp"

namespace pdsp {

struct ShardSelection {
  std::vector<int64_t> vars;  // own variables, then the halo: ids inside the example
  int64_t own_vars = 0;
  std::vector<int64_t> factors;  // own factors, then the copies
  int64_t own_factors = 0;
  std::shared_ptr<ExampleShard> shard;  // for the slice's Dataset::shard
};

// `structure` holds the example alone (read_structure), `graph` and `colouring` are its own,
// `partition` its split; shard `index` lives on rank first_rank + index. `acyclic`: the whole
// example's factor graph has no cycle (the counting numbers decide by it).
ShardSelection select_shard(const Dataset& structure, const FactorGraph& graph,
                            const Colouring& colouring, const ShardPartition& partition,
                            bool acyclic, int index, int first_rank);

}  // namespace pdsp
