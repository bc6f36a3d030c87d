#pragma once
// Reading, checking and writing format 2's compact features (typed_features.hpp). The reader
// of the rest of the file (dataset_reader.cpp) calls these for the compact part, so every rule
// of that part lives in one file.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {

// What the scan of a file learns about its compact part, the same on every rank.
struct CompactLayout {
  std::vector<int64_t> obs_offset;      // [examples + 1]; empty when the file has no /obs rows
  RegionTypes var_types, factor_types;  // the type tables; their per-region arrays stay empty
  bool has_obs_values = false;          // /obs/value is stored (else every value is 1)
};

// Checks the compact part's small arrays and their lengths (a format-1 file must have none) and
// reads the type tables. `num_params` bounds the blocks. Throws InputError naming the dataset.
CompactLayout scan_compact_features(const h5::File& file, int64_t format_version,
                                    int64_t num_params, int64_t num_examples, int64_t num_vars,
                                    int64_t num_factors);

// Reads and checks the compact part of examples [first, last) into `data`, whose structure
// (cardinalities, factors, offsets) is already read.
void read_compact_features(const h5::File& file, const CompactLayout& layout, int64_t first,
                           int64_t last, Dataset& data);

// Consecutive regions of one kind: file positions [file_first, file_first + count) at local
// positions [local_first, local_first + count) of a slice.
struct RegionRun {
  int64_t file_first, local_first, count;
};

// The compact part of the regions one shard of the examples of `structure` keeps (`vars` and
// `factors`, ids in `structure`, read from `var_runs` and `factor_runs`; data.card and the factor
// tables already read), with all the examples' observation rows; each region may read its own
// example's.
void read_compact_regions(const h5::File& file, const CompactLayout& layout,
                          const Dataset& structure, std::span<const int64_t> vars,
                          std::span<const int64_t> factors, std::span<const RegionRun> var_runs,
                          std::span<const RegionRun> factor_runs, Dataset& data);

// Writes the compact part of a whole data set (nothing when it has none).
void write_compact_features(h5::File& file, const Dataset& data);

}  // namespace pdsp
