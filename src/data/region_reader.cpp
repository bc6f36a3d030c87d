// Reading the regions one shard of a split example keeps, a run of consecutive regions at a time
// (a band of a grid is one run of variables and a few of factors).
#include <algorithm>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/reader_checks.hpp"
#include "pdsp/data/typed_features_io.hpp"

namespace pdsp {
namespace {

// Maximal runs of consecutive ids in `ids` (in their order), as file positions from `file_base`.
std::vector<RegionRun> runs_of(std::span<const int64_t> ids, int64_t file_base) {
  std::vector<RegionRun> runs;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!runs.empty() && file_base + ids[i] == runs.back().file_first + runs.back().count) {
      ++runs.back().count;
      continue;
    }
    runs.push_back({file_base + ids[i], static_cast<int64_t>(i), 1});
  }
  return runs;
}

// Appends rows read by read_features to `to`.
void append_rows(const SparseRows& from, SparseRows& to) {
  if (to.param.empty() && to.ptr.size() == 1) to.first_nnz = from.first_nnz;
  const LocalIndex base = to.ptr.back();
  for (size_t i = 1; i < from.ptr.size(); ++i) to.ptr.push_back(base + from.ptr[i]);
  to.param.insert(to.param.end(), from.param.begin(), from.param.end());
  to.value.insert(to.value.end(), from.value.begin(), from.value.end());
}

template <class T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

Dataset read_example_regions(const DatasetLayout& layout, const Dataset& structure,
                             std::span<const int64_t> vars, int64_t own_vars,
                             std::span<const int64_t> factors, int64_t own_factors) {
  const h5::File file = h5::File::open_read(layout.path);
  const std::string& path = layout.path;
  const int64_t example = structure.first_example;
  Dataset d;
  d.num_params = structure.num_params;
  d.first_example = example;
  d.first_var = structure.first_var;
  d.first_factor = structure.first_factor;
  d.first_slot = structure.first_slot;
  d.first_state = layout.state_offset[example];
  d.first_table_entry = layout.table_offset[example];
  d.file_examples = structure.file_examples;
  d.file_path = path;
  d.labelled = layout.has_labels;
  d.counted = layout.has_var_counting && layout.has_factor_counting;
  d.var_offset = {0, own_vars};
  d.factor_offset = {0, own_factors};

  std::vector<LocalIndex> local_of(static_cast<size_t>(structure.num_vars()), -1);
  for (size_t i = 0; i < vars.size(); ++i) {
    local_of[vars[i]] = static_cast<LocalIndex>(i);
    d.card.push_back(structure.card[vars[i]]);
  }
  for (int64_t a : factors) {
    for (int64_t k = structure.factor_var_ptr[a]; k < structure.factor_var_ptr[a + 1]; ++k)
      d.factor_vars.push_back(local_of[structure.factor_vars[k]]);
    d.factor_var_ptr.push_back(static_cast<LocalIndex>(d.factor_vars.size()));
  }
  d.rebuild_offsets(path);

  const std::vector<RegionRun> var_runs = runs_of(vars, structure.first_var);
  const std::vector<RegionRun> factor_runs = runs_of(factors, structure.first_factor);
  SparseRows rows;
  for (const RegionRun& run : var_runs) {
    const int64_t v0 = run.file_first - structure.first_var;
    const int64_t s0 = structure.state_offset[v0];
    const int64_t states = structure.state_offset[v0 + run.count] - s0;
    if (layout.has_labels) {
      const std::vector<int32_t> label =
          file.read<int32_t>("/vars/label", run.file_first, run.count);
      check_labels(path, run.file_first, label,
                   std::span<const int32_t>(structure.card).subspan(v0, run.count));
      append(d.label, label);
    }
    read_features(file, "/vars", layout.has_var_rows, d.first_state + s0, states, layout.num_params,
                  rows);
    append_rows(rows, d.var_features);
    if (layout.has_var_counting)
      append(d.var_counting, read_finite(file, "/vars/counting", run.file_first, run.count));
    if (layout.has_loss)
      append(d.var_loss, read_finite(file, "/vars/loss", d.first_state + s0, states));
  }
  for (const RegionRun& run : factor_runs) {
    const int64_t a0 = run.file_first - structure.first_factor;
    const int64_t t0 = structure.table_offset[a0];
    read_features(file, "/factors", layout.has_factor_rows, d.first_table_entry + t0,
                  structure.table_offset[a0 + run.count] - t0, layout.num_params, rows);
    append_rows(rows, d.factor_features);
    if (layout.has_factor_counting)
      append(d.factor_counting, read_finite(file, "/factors/counting", run.file_first, run.count));
  }
  read_compact_regions(file, layout.compact, structure, vars, factors, var_runs, factor_runs, d);
  return d;
}

}  // namespace pdsp
