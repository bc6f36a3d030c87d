#pragma once
// Which regions one shard of a split example keeps (example_shard.hpp): its own variables and
// factors, the halo, the copies of cut factors, and the lists of what it exchanges with each
// other shard. Decided from the structure alone of the example (or of the examples split as one);
// read_example_regions then reads them.
#include <memory>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/shard_partition.hpp"

namespace pdsp {

struct ShardSelection {
  std::vector<int64_t> vars;  // own variables, then the halo: ids inside the structure
  int64_t own_vars = 0;
  std::vector<int64_t> factors;  // own factors, then the copies
  int64_t own_factors = 0;
  std::shared_ptr<ExampleShard> shard;  // for the slice's Dataset::shard
};

// `structure` holds the examples split as one (read_structure; usually one), `graph` and
// `colouring` are its own (a colouring per example, whose classes the shards sweep together),
// `partition` their split; shard `index` lives on rank first_rank + index. `acyclic`: [the
// structure's variables] whether the variable's example has no cycle (auto counting decides by
// it).
ShardSelection select_shard(const Dataset& structure, const FactorGraph& graph,
                            const Colouring& colouring, const ShardPartition& partition,
                            std::span<const uint8_t> acyclic, int index, int first_rank);

}  // namespace pdsp
