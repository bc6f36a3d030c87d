#pragma once
// Contiguous, cost-balanced ranges of examples per rank (design.md §6), and which large examples
// are split into shards over a group of ranks.
#include <cstdint>
#include <string>
#include <vector>

namespace pdsp {

// Boundaries b[0] = 0 <= b[1] <= ... <= b[parts] = cost.size(): part i gets [b[i], b[i+1]).
// Each boundary is placed where the cumulative cost crosses i/parts of the total, on whichever
// side of the crossing example leaves the smaller error.
std::vector<int64_t> partition_by_cost(const std::vector<double>& cost, int parts);
// The largest part's cost over the mean part cost (1: perfect balance; examples are not split,
// so one large example can make it large).
double partition_imbalance(const std::vector<double>& cost, const std::vector<int64_t>& bounds);

// What one rank holds: examples [first, last) whole, or, when shards > 1, shard `shard` of
// examples [first, last) split as one (usually one example, last = first + 1), whose shards lie
// on ranks first_rank .. + shards - 1.
struct RankSlice {
  int64_t first = 0, last = 0;
  int shard = 0, shards = 1, first_rank = 0;
};

// Which examples are split and over how many ranks (docs/guide.md "Shards"). `shards` 0 is auto: an
// example is large when its cost exceeds a rank's share (total / ranks) by more than 10% (or at
// all, when there are fewer examples than ranks); large examples get ranks in proportion to their
// cost, runs of small examples between them at least one rank each, split by cost as today.
// When the ranks are too few for that (more units than ranks, or a large example left with one
// rank), auto splits all the examples as one unit over every rank instead (the hybrid layout: a
// rank holds part of the large example and small examples beside it). `shards` >= 2 gives each
// large example that many shards (an InputError when the ranks do not suffice, or the example has
// fewer variables); 1 never splits. Without a large example it is partition_by_cost, as it is for
// `shards` >= 2 with more runs than ranks. `variables` caps the shards of a unit at one per
// variable.
std::vector<RankSlice> plan_rank_slices(const std::vector<double>& cost,
                                        const std::vector<int64_t>& variables, int ranks,
                                        int shards);
// "R ranks: E whole examples on W ranks; example n in S shards, ..." for the run line.
std::string describe_rank_slices(const std::vector<RankSlice>& slices);

}  // namespace pdsp
