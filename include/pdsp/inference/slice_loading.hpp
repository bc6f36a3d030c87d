#pragma once
// Loading a rank's slice of a data set: contiguous examples, or a shard of an example split
// across ranks (docs/guide.md "Shards").
#include <functional>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// Scans the file, lays it out over the ranks of `comm` (plan_rank_slices with `shards`, 0 =
// auto; 1, the default, never splits an example) and reads this rank's slice, whose `ranks` is
// then `comm`. A rank that holds a shard reads its example whole, splits it as every rank of its
// group does (the same partition and colouring, computed from the same data), keeps its shard
// (cut_shard) and lets the rest go. Collective; an input error on any rank is rethrown on every
// rank as CollectiveError. `on_stage`, when given, hears when each stage begins (for a progress
// line); `plan`, when given, receives every rank's slice.
Dataset load_rank_slice(const std::string& path, Communicator& comm,
                        DatasetLayout* layout = nullptr,
                        const std::function<void(const std::string&)>& on_stage = {},
                        int shards = 1, std::vector<RankSlice>* plan = nullptr);

}  // namespace pdsp
