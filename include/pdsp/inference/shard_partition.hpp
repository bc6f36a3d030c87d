#pragma once
// The split of one example's variables into shards, for examples too large for one rank: blocks
// of the interaction graph (variables that share a factor are neighbours) with few cut factors.
// A row-major grid (4- or 8-connected pairwise factors) is cut into rectangles directly; any
// other graph goes to METIS, weighted by each variable's share of a sweep's work. Deterministic:
// the same example and shard count give the same split on every machine.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

struct ShardPartition {
  int shards = 1;
  std::vector<int32_t> shard_of;   // [the examples' variables] in [0, shards)
  std::vector<int64_t> variables;  // [shards] variables per shard
  int64_t cut_factors = 0;         // factors whose variables lie in more than one shard
  // "grid blocks RxC of HxW" or "metis"; "whole" for one shard.
  std::string method;
};

// A grid found in an example's pairwise factors: `rows` x `cols` variables in row-major order.
struct GridShape {
  int64_t rows = 0, cols = 0;
  bool diagonals = false;  // 8-connected
};

// The example's grid, if its pairwise factors are exactly those of a row-major 4- or 8-connected
// grid of at least 2 x 2 (factors of arity 1 may be added; no other arity); rows = 0 otherwise.
GridShape find_grid(const Dataset& data, int64_t example);

// Splits examples [first, last) of `data` (usually one) into `shards` parts, as one graph (METIS
// when they are several: it keeps small examples whole where the balance allows, as a cut costs
// edges). Throws InputError naming `source` for fewer than 1 shard or more shards than variables.
ShardPartition partition_example(const Dataset& data, int64_t first, int64_t last, int shards,
                                 const std::string& source);

}  // namespace pdsp
