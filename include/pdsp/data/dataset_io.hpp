#pragma once
// Reading and writing the pdsp-dataset HDF5 format (design.md section 7). Every invariant of the
// format is checked on load; a violation throws InputError naming file, dataset and index.
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/provenance.hpp"
#include "pdsp/data/typed_features_io.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

inline constexpr const char* kDatasetFormat = "pdsp-dataset";
// Format 1 is the row form; format 2 adds the compact features (typed_features.hpp) and makes
// the feature rows optional. A data set without compact features is written as format 1, so
// that every pdsp reads it.
inline constexpr int64_t kDatasetFormatVersion = 2;

// What every rank knows about the whole file before it reads its own slice: per-example sizes,
// from which the cost-balanced partition and the global offsets of any slice follow.
struct DatasetLayout {
  std::string path;
  int64_t num_params = 0;
  std::vector<int64_t> var_offset;     // [examples + 1]
  std::vector<int64_t> factor_offset;  // [examples + 1]
  std::vector<int64_t> state_offset;   // [examples + 1] prefix sums of states
  std::vector<int64_t> table_offset;   // [examples + 1] prefix sums of factor table entries
  std::vector<int64_t> slot_offset;    // [examples + 1] prefix sums of factor arities
  std::vector<double> cost;            // [examples] work of one sweep (see cost model)
  bool has_labels = false;
  bool has_var_counting = false;
  bool has_factor_counting = false;
  bool has_loss = false;
  int64_t format_version = 1;
  bool has_var_rows = true;     // format 2 may leave out /vars/feat_*
  bool has_factor_rows = true;  // and /factors/feat_*
  CompactLayout compact;
  NonlocalTerms nonlocal;  // the whole file's (num_states 0: none)

  int64_t num_examples() const { return static_cast<int64_t>(var_offset.size()) - 1; }
  int64_t num_vars() const { return var_offset.back(); }
  int64_t num_factors() const { return factor_offset.back(); }
};

// Reads the small index arrays on every rank and the graph structure of 1/size of the examples
// on each rank, validates them, and shares the per-example sizes. Collective.
DatasetLayout scan_dataset(const std::string& path, Communicator& comm);

// Reads and validates examples [first, last) of a scanned file.
Dataset read_examples(const DatasetLayout& layout, int64_t first, int64_t last);

// The structure alone of examples [first, last): cardinalities, factors and offsets, checked as
// read_examples checks them. What a split example's shards decide their regions from.
Dataset read_structure(const DatasetLayout& layout, int64_t first, int64_t last);

// The regions one shard keeps (region_reader.cpp) of the examples of `structure` (read_structure:
// the example split, or several split as one): variables `vars` and factors `factors`, ids inside
// `structure`, in the order the slice holds them, with every check read_examples makes. The
// slice's one example covers the first `own_vars` variables and `own_factors` factors, the rest
// lying after it (example_shard.hpp); factor variables are renumbered to positions in `vars`.
Dataset read_example_regions(const DatasetLayout& layout, const Dataset& structure,
                             std::span<const int64_t> vars, int64_t own_vars,
                             std::span<const int64_t> factors, int64_t own_factors);

// Serial convenience: scan and read the whole file.
Dataset read_dataset(const std::string& path);

// Writes a whole data set (a slice with first_* == 0), atomically (see write_output), with the
// provenance of the run that made it.
void write_dataset(const std::string& path, const Dataset& data, const Provenance& provenance = {});

}  // namespace pdsp
