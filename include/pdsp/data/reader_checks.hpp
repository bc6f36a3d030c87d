#pragma once
// The checks every part of the data-set reader applies to the arrays it reads (dataset_reader
// for the graph and the feature rows, typed_features_reader for format 2's compact part): each
// violation is an InputError naming the file, the dataset and the index.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/allocation.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/local_index.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

// Offsets must start at 0, never decrease (or strictly increase), and end at `end`.
void check_offsets(const std::string& path, const std::string& name,
                   const std::vector<int64_t>& offsets, bool strictly, int64_t end);

// Whether `count` entries of `width` each, starting at `offset`, end at or before `limit` (all
// four >= 0): decided without forming offset + count * width, which values read from a damaged
// file (an offset near 2^63) can push past INT64_MAX, where the sum wraps and looks small.
bool block_fits(int64_t offset, int64_t count, int64_t width, int64_t limit);

// Whether the optional dataset `name` exists; when it does, its length must be `expected`.
bool check_optional_length(const h5::File& file, const std::string& name, int64_t expected);

// Labels read from /vars/label at file position `first`: each in [0, card) or -1 (unobserved,
// docs/file-format.md); `card` holds the same variables' cardinalities.
void check_labels(const std::string& path, int64_t first, std::span<const int32_t> label,
                  std::span<const int32_t> card);

// Entries [offset, offset + count) of `name`, each of which must be finite.
std::vector<double> read_finite(const h5::File& file, const std::string& name, int64_t offset,
                                int64_t count);

// Reads entries [offset, offset + count) of a 64-bit array of global positions a block at a
// time, passes each to check(index in the file, value), and keeps value - base as a LocalIndex:
// the 64-bit values are never held whole, so a slice is read without a second copy.
template <class Vector = std::vector<LocalIndex>, class Check>
Vector read_local(const h5::File& file, const std::string& name, int64_t offset, int64_t count,
                  int64_t base, Check&& check) {
  constexpr int64_t kBlock = int64_t{1} << 20;
  Vector local = allocate_vector<LocalIndex, Vector>(
      file.path() + ": " + name, std::to_string(count) + " local indices", count);
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    const std::vector<int64_t> block = file.read<int64_t>(name, offset + start, n);
    for (int64_t i = 0; i < n; ++i) {
      check(offset + start + i, block[i]);
      if (block[i] - base > std::numeric_limits<LocalIndex>::max())
        throw_file_error(file.path(), name, offset + start + i,
                         "this rank's slice reaches past 2^31 - 1 entries: run on more ranks");
      local[start + i] = static_cast<LocalIndex>(block[i] - base);
    }
  }
  return local;
}

// Reads the CSR row pointers [row0, row0 + rows] of `ptr_name`, which index an array of
// `nnz_total` entries named `entries_name`, as local offsets: they must not decrease, must stay
// inside the entries, and the file's last one must end at nnz_total. Sets `first_entry` to the
// global position of the slice's first entry.
RowPointers read_row_pointers(const h5::File& file, const std::string& ptr_name,
                              const std::string& entries_name, int64_t row0, int64_t rows,
                              int64_t nnz_total, int64_t& first_entry);

// Reads the feature rows [row0, row0 + rows) of one region kind ("/vars" or "/factors") and
// checks them; without rows in the file (`present` false), every row is empty.
void read_features(const h5::File& file, const std::string& group, bool present, int64_t row0,
                   int64_t rows, int64_t num_params, SparseRows& out);

}  // namespace pdsp
