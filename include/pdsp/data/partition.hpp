#pragma once
// Contiguous, cost-balanced ranges of examples per rank (design.md §6).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// Boundaries b[0] = 0 <= b[1] <= ... <= b[parts] = cost.size(): part i gets [b[i], b[i+1]).
// Each boundary is placed where the cumulative cost crosses i/parts of the total, on whichever
// side of the crossing example leaves the smaller error.
std::vector<int64_t> partition_by_cost(const std::vector<double>& cost, int parts);
// The largest part's cost over the mean part cost (1: perfect balance; examples are not split,
// so one large example can make it large).
double partition_imbalance(const std::vector<double>& cost, const std::vector<int64_t>& bounds);

// Scans the file, partitions it over the ranks of `comm` and reads this rank's slice, whose
// `ranks` is then `comm`. Collective; an input error on any rank is rethrown on every rank as
// CollectiveError. `on_stage`, when given, hears when each stage begins (for a progress line).
Dataset load_rank_slice(const std::string& path, Communicator& comm,
                        DatasetLayout* layout = nullptr,
                        const std::function<void(const std::string&)>& on_stage = {});

}  // namespace pdsp
