#pragma once
// The identity of a training set: its sizes and a checksum of every array, computed from the
// slices the ranks hold, so it is the same for any rank count. A checkpoint stores it and a
// resume refuses data that differs.
#include <array>
#include <string>

#include "pdsp/data/checksum.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// Collective. A shard contributes its whole example's part (ExampleShard::fingerprint).
std::string dataset_fingerprint(const Dataset& slice, Communicator& comm);

// One slice's part of the checksum and of the sizes [variables, factors, states, table entries,
// nnz]; `root`: the rank that adds the parts every slice shares (format 2's type tables).
void fingerprint_part(const Dataset& slice, bool root, Checksum& sum,
                      std::array<int64_t, 5>& sizes);

}  // namespace pdsp
