#pragma once
// The identity of a training set: its sizes and a checksum of every array, computed from the
// slices the ranks hold, so it is the same for any rank count. A checkpoint stores it and a
// resume refuses data that differs.
#include <array>
#include <string>

#include "pdsp/data/checksum.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// Collective. A shard contributes its whole example's part (ExampleShard::fingerprint).
std::string dataset_fingerprint(const Dataset& slice, Communicator& comm);
// Its checksum alone (one word of hex digits). Collective.
std::string dataset_checksum(const Dataset& slice, Communicator& comm);

// Part `part` of `parts` of the contribution of examples [first, last), read from the file a
// block at a time: each array's positions of the examples split into `parts` ranges (part 0 also
// hashes the examples' offsets). What the shards of examples split as one add instead of a
// slice's part; the same sum.
void fingerprint_example_part(const DatasetLayout& layout, int64_t first, int64_t last, int part,
                              int parts, bool root, Checksum& sum, std::array<int64_t, 5>& sizes);

// One slice's part of the checksum and of the sizes [variables, factors, states, table entries,
// nnz]; `root`: the rank that adds the parts every slice shares (format 2's type tables).
void fingerprint_part(const Dataset& slice, bool root, Checksum& sum,
                      std::array<int64_t, 5>& sizes);

}  // namespace pdsp
