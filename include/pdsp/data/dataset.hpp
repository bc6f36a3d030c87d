#pragma once
// In-memory form of a pdsp data set (design.md section 7): flat CSR arrays, one slice of
// consecutive examples. All indices are local to the slice; `first_*` give the global position
// of the slice in the file so that outputs can be written back in global order.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pdsp/data/example_shard.hpp"
#include "pdsp/data/local_index.hpp"
#include "pdsp/data/nonlocal_terms.hpp"
#include "pdsp/data/row_pointers.hpp"
#include "pdsp/data/typed_features.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// `value` as a LocalIndex, or an InputError naming `what` and `source` when it does not fit.
LocalIndex to_local_index(int64_t value, const std::string& what, const std::string& source);

// Sparse feature rows: row i holds (param[k], value[k]) for k in [ptr[i], ptr[i+1]).
struct SparseRows {
  RowPointers ptr{0};
  std::vector<int32_t> param;
  std::vector<double> value;
  int64_t first_nnz = 0;  // global position of the first entry in the file

  int64_t num_rows() const { return static_cast<int64_t>(ptr.size()) - 1; }
  int64_t nnz() const { return static_cast<int64_t>(param.size()); }
};

struct Dataset {
  int64_t num_params = 0;

  // Position of this slice in the file it came from (all zero for a whole data set).
  int64_t first_example = 0;
  int64_t first_var = 0;
  int64_t first_factor = 0;
  int64_t first_state = 0;
  int64_t first_table_entry = 0;
  int64_t first_slot = 0;     // position in /factors/vars
  int64_t file_examples = 0;  // examples in the whole file

  std::vector<int64_t> var_offset{0};         // [examples + 1], local
  std::vector<int64_t> factor_offset{0};      // [examples + 1], local
  std::vector<int32_t> card;                  // [vars]
  std::vector<int32_t> label;                 // [vars] or empty when the file has no labels
  SparseRows var_features;                    // one row per (variable, state)
  std::vector<LocalIndex> factor_var_ptr{0};  // [factors + 1]
  std::vector<LocalIndex> factor_vars;        // local variable ids
  SparseRows factor_features;                 // one row per (factor, joint state)
  std::vector<double> var_counting;           // optional, [vars]
  std::vector<double> factor_counting;        // optional, [factors]
  std::vector<double> var_loss;               // optional, [states]
  // Format 2's compact features (see typed_features.hpp); empty in a format-1 file.
  std::vector<int64_t> obs_offset{0};  // [examples + 1] local observation rows of each example
  ObservationRows observations;
  RegionTypes var_types, factor_types;
  // Non-local energies on whole examples (nonlocal_terms.hpp); num_states 0: none.
  NonlocalTerms nonlocal;
  bool labelled = false;  // the file has /vars/label
  bool counted = false;   // the file has both counting arrays
  std::string file_path;  // the file the slice was read from, for error messages ("" in memory)
  // The ranks that hold the other slices of the same file (set by load_rank_slice): checks that
  // every rank must agree on, such as finite potentials, run collectively over them. Null for a
  // data set one process holds whole.
  Communicator* ranks = nullptr;
  // Set when the slice is one shard of an example split across ranks (example_shard.hpp): its
  // halo variables and copied factors lie after the example's ranges.
  std::shared_ptr<const ExampleShard> shard;

  // Derived on load: prefix sums of the cardinalities and of the table sizes.
  std::vector<LocalIndex> state_offset{0};  // [vars + 1]
  std::vector<LocalIndex> table_offset{0};  // [factors + 1]

  int64_t num_examples() const { return static_cast<int64_t>(var_offset.size()) - 1; }
  int64_t num_vars() const { return static_cast<int64_t>(card.size()); }
  int64_t num_factors() const { return static_cast<int64_t>(factor_var_ptr.size()) - 1; }
  // The file's index of local variable v and of local factor a (errors name regions by them).
  int64_t file_var(int64_t v) const { return shard ? shard->global_var[v] : first_var + v; }
  int64_t file_factor(int64_t a) const {
    return shard ? shard->global_factor[a] : first_factor + a;
  }
  // The variables and factors the examples cover: all of them, except on a shard (its halo).
  int64_t owned_vars() const { return var_offset.back(); }
  int64_t owned_factors() const { return factor_offset.back(); }
  int64_t num_states() const { return state_offset.back(); }
  int64_t num_table_entries() const { return table_offset.back(); }
  int64_t arity(int64_t a) const { return factor_var_ptr[a + 1] - factor_var_ptr[a]; }
  // Whether the file has labels / counting numbers: a property of the file, the same on every
  // rank, even on one whose slice is empty.
  bool has_labels() const { return labelled; }
  bool has_counting() const { return counted; }
  // Whether any compact part is present: the file is (or is written as) format 2.
  bool is_compact() const { return var_types.present || factor_types.present; }
  // file_path, or "data set" for data built in memory: how errors name the data.
  std::string source() const { return file_path.empty() ? "data set" : file_path; }
  // `ranks`, or a serial communicator for a data set held whole.
  Communicator& communicator() const;

  // Recomputes state_offset and table_offset from card and the factor lists; `source` names the
  // data in the error thrown when they outgrow LocalIndex.
  void rebuild_offsets(const std::string& source = "data set");
};

}  // namespace pdsp
