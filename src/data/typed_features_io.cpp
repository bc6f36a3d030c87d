#include "pdsp/data/typed_features_io.hpp"

#include <algorithm>

#include "pdsp/data/reader_checks.hpp"

namespace pdsp {
namespace {

// The datasets of one region kind's typed part.
struct KindNames {
  std::string type;          // "/vars/type"
  std::string obs_row;       // "/vars/obs_row"
  std::string param_offset;  // "/var_types/param_offset"
  std::string dim;           // "/var_types/dim"
  std::string regions;       // "variable", for messages
};

const KindNames kVarNames{"/vars/type", "/vars/obs_row", "/var_types/param_offset",
                          "/var_types/dim", "variable"};
const KindNames kFactorNames{"/factors/type", "/factors/obs_row", "/factor_types/param_offset",
                             "/factor_types/dim", "factor"};

bool reads_observations(const RegionTypes& types) {
  return std::any_of(types.dim.begin(), types.dim.end(), [](int32_t d) { return d > 0; });
}

RegionTypes scan_types(const h5::File& file, const KindNames& names, int64_t regions,
                       int64_t num_params) {
  const std::string& path = file.path();
  RegionTypes types;
  if (!file.exists(names.type) && !file.exists(names.param_offset) && !file.exists(names.dim))
    return types;
  for (const std::string* name : {&names.type, &names.param_offset, &names.dim})
    if (!file.exists(*name))
      throw_file_error(path, *name,
                       "is missing: typed features need " + names.type + ", " + names.param_offset +
                           " and " + names.dim);
  if (file.length(names.type) != regions)
    throw_file_error(path, names.type,
                     "has length " + std::to_string(file.length(names.type)) + ", expected " +
                         std::to_string(regions) + " (one per " + names.regions + ")");
  types.param_offset = file.read_all<int64_t>(names.param_offset);
  types.dim = file.read_all<int32_t>(names.dim);
  if (types.dim.size() != types.param_offset.size())
    throw_file_error(path, names.dim,
                     "has length " + std::to_string(types.dim.size()) + ", expected the length " +
                         std::to_string(types.param_offset.size()) + " of " + names.param_offset);
  for (int64_t k = 0; k < types.num_types(); ++k) {
    if (types.param_offset[k] < 0)
      throw_file_error(path, names.param_offset, k,
                       "is " + std::to_string(types.param_offset[k]) + ", must be >= 0");
    if (types.dim[k] < 0)
      throw_file_error(path, names.dim, k, "is " + std::to_string(types.dim[k]) + ", must be >= 0");
    // Even a block of one state must fit: this bounds param_offset and dim by num_params (< 2^31)
    // here, at the scan on every command, before a rank sizes anything by them, and so keeps
    // every later offset + states * dim far from overflowing.
    const int64_t width = std::max(types.dim[k], 1);
    if (width > num_params)
      throw_file_error(
          path, names.dim, k,
          "is " + std::to_string(types.dim[k]) +
              ": one state's block is larger than @num_params = " + std::to_string(num_params));
    if (!block_fits(types.param_offset[k], 1, width, num_params))
      throw_file_error(path, names.param_offset, k,
                       "is " + std::to_string(types.param_offset[k]) + ": a block of one state, " +
                           std::to_string(width) + (width == 1 ? " parameter" : " parameters") +
                           " wide, would end past @num_params = " + std::to_string(num_params));
  }
  if (reads_observations(types) && !check_optional_length(file, names.obs_row, regions))
    throw_file_error(path, names.obs_row,
                     "is missing: a type with " + names.dim + " > 0 reads an observation row");
  types.present = true;
  return types;
}

// Reads and checks the types of one kind's regions of the slice, which lie in `runs` of the file
// (`regions` in all); size(r) is local region r's state count, rows_of(r) the observation rows
// [lo, hi) of its example (local to the slice's rows).
template <class Size, class RowsOf>
void read_types(const h5::File& file, const KindNames& names, const RegionTypes& tables,
                std::span<const RegionRun> runs, int64_t regions, Size&& size, RowsOf&& rows_of,
                int64_t num_params, Dataset& data, RegionTypes& out) {
  out = tables;
  if (!tables.present) return;
  const std::string& path = file.path();
  const bool reads = reads_observations(tables);
  out.type.assign(static_cast<size_t>(regions), -1);
  if (reads) out.obs_row.assign(static_cast<size_t>(regions), -1);
  const ObservationRows& obs = data.observations;
  for (const RegionRun& run : runs) {
    const std::vector<int32_t> types = file.read<int32_t>(names.type, run.file_first, run.count);
    std::vector<int64_t> rows;
    if (reads) rows = file.read<int64_t>(names.obs_row, run.file_first, run.count);
    for (int64_t i = 0; i < run.count; ++i) {
      const int64_t r = run.local_first + i, at = run.file_first + i;
      const int64_t k = out.type[r] = types[i];
      if (k < -1 || k >= tables.num_types())
        throw_file_error(path, names.type, at,
                         "type " + std::to_string(k) + " is outside [-1, " +
                             std::to_string(tables.num_types()) + ")");
      if (k < 0) continue;
      const int64_t states = size(r), width = std::max(tables.dim[k], 1);
      if (!block_fits(tables.param_offset[k], states, width, num_params))
        throw_file_error(path, names.type, at,
                         "type " + std::to_string(k) + " gives this " + names.regions + " " +
                             std::to_string(states) + " x " + std::to_string(width) +
                             " parameters from " + std::to_string(tables.param_offset[k]) +
                             " on, past @num_params = " + std::to_string(num_params));
      if (tables.dim[k] == 0) continue;
      const auto [first_row, last_row] = rows_of(r);
      const int64_t lo = obs.first_row + first_row, hi = obs.first_row + last_row;
      if (rows[i] < lo || rows[i] >= hi)
        throw_file_error(path, names.obs_row, at,
                         "observation row " + std::to_string(rows[i]) +
                             " is not one of its example's rows [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + ")");
      const auto row = static_cast<LocalIndex>(rows[i] - obs.first_row);
      out.obs_row[r] = row;
      for (int64_t e = obs.ptr[row]; e < obs.ptr[row + 1]; ++e)
        if (obs.index[e] >= tables.dim[k])
          throw_file_error(path, "/obs/index", obs.first_nnz + e,
                           "position " + std::to_string(obs.index[e]) + " is outside [0, " +
                               std::to_string(tables.dim[k]) + ") of type " + std::to_string(k) +
                               ", which " + names.regions + " " + std::to_string(at) + " reads");
    }
  }
}

void write_types(h5::File& file, const KindNames& names, const RegionTypes& types) {
  if (!types.present) return;
  file.write(names.param_offset, types.param_offset);
  file.write(names.dim, types.dim);
  file.write(names.type, types.type);
  if (reads_observations(types))
    file.write(names.obs_row, std::vector<int64_t>(types.obs_row.begin(), types.obs_row.end()));
}

}  // namespace

CompactLayout scan_compact_features(const h5::File& file, int64_t format_version,
                                    int64_t num_params, int64_t num_examples, int64_t num_vars,
                                    int64_t num_factors) {
  const std::string& path = file.path();
  CompactLayout layout;
  layout.var_types = scan_types(file, kVarNames, num_vars, num_params);
  layout.factor_types = scan_types(file, kFactorNames, num_factors, num_params);
  const bool reads =
      reads_observations(layout.var_types) || reads_observations(layout.factor_types);
  if (reads || file.exists("/examples/obs_offset")) {
    for (const char* name : {"/examples/obs_offset", "/obs/ptr", "/obs/index"})
      if (!file.exists(name))
        throw_file_error(path, name,
                         "is missing: observation rows need /examples/obs_offset, /obs/ptr and "
                         "/obs/index");
    layout.obs_offset = file.read_all<int64_t>("/examples/obs_offset");
    if (static_cast<int64_t>(layout.obs_offset.size()) != num_examples + 1)
      throw_file_error(path, "/examples/obs_offset",
                       "has length " + std::to_string(layout.obs_offset.size()) + ", expected " +
                           std::to_string(num_examples + 1) + " (examples + 1)");
    const int64_t rows = file.length("/obs/ptr") - 1;
    if (rows < 0) throw_file_error(path, "/obs/ptr", "is empty; it needs rows + 1 entries");
    check_offsets(path, "/examples/obs_offset", layout.obs_offset, false, rows);
    layout.has_obs_values = check_optional_length(file, "/obs/value", file.length("/obs/index"));
  }
  if (format_version < 2) {
    const char* compact = layout.var_types.present      ? "/vars/type"
                          : layout.factor_types.present ? "/factors/type"
                          : !layout.obs_offset.empty()  ? "/examples/obs_offset"
                                                        : nullptr;
    if (compact != nullptr)
      throw_file_error(path, compact,
                       "is a compact feature of format_version 2, but the file says "
                       "format_version " +
                           std::to_string(format_version));
  }
  return layout;
}

namespace {

// The observation rows of examples [first, last), read and checked into `data`.
void read_observation_rows(const h5::File& file, const CompactLayout& layout, int64_t first,
                           int64_t last, Dataset& data) {
  ObservationRows& obs = data.observations;
  data.obs_offset.assign(static_cast<size_t>(last - first) + 1, 0);
  if (layout.obs_offset.empty()) return;
  const int64_t r0 = layout.obs_offset[first];
  for (int64_t n = first; n <= last; ++n) data.obs_offset[n - first] = layout.obs_offset[n] - r0;
  const int64_t nnz_total = file.length("/obs/index");
  obs.first_row = r0;
  obs.ptr = read_row_pointers(file, "/obs/ptr", "/obs/index", r0, layout.obs_offset[last] - r0,
                              nnz_total, obs.first_nnz);
  const int64_t count = obs.ptr.back();
  obs.index = file.read<int32_t>("/obs/index", obs.first_nnz, count);
  for (int64_t e = 0; e < count; ++e)
    if (obs.index[e] < 0)
      throw_file_error(file.path(), "/obs/index", obs.first_nnz + e,
                       "position " + std::to_string(obs.index[e]) + " is negative");
  if (layout.has_obs_values) obs.value = read_finite(file, "/obs/value", obs.first_nnz, count);
}

// The observation rows (data.obs_offset) of the example that holds region `id`, given where each
// example's regions start (`region_offset`): the rows that region may read.
std::pair<int64_t, int64_t> example_rows(const Dataset& data,
                                         const std::vector<int64_t>& region_offset, int64_t id) {
  const int64_t n =
      std::upper_bound(region_offset.begin(), region_offset.end(), id) - region_offset.begin() - 1;
  return {data.obs_offset[n], data.obs_offset[n + 1]};
}

// Both kinds' types, over the runs of the file each kind's regions come from.
template <class VarRowsOf, class FactorRowsOf>
void read_both_types(const h5::File& file, const CompactLayout& layout,
                     std::span<const RegionRun> var_runs, std::span<const RegionRun> factor_runs,
                     const VarRowsOf& var_rows, const FactorRowsOf& factor_rows, Dataset& data) {
  read_types(
      file, kVarNames, layout.var_types, var_runs, data.num_vars(),
      [&](int64_t v) { return int64_t{data.card[v]}; }, var_rows, data.num_params, data,
      data.var_types);
  read_types(
      file, kFactorNames, layout.factor_types, factor_runs, data.num_factors(),
      [&](int64_t a) { return int64_t{data.table_offset[a + 1] - data.table_offset[a]}; },
      factor_rows, data.num_params, data, data.factor_types);
}

}  // namespace

void read_compact_features(const h5::File& file, const CompactLayout& layout, int64_t first,
                           int64_t last, Dataset& data) {
  read_observation_rows(file, layout, first, last, data);
  const RegionRun vars[1] = {{data.first_var, 0, data.num_vars()}};
  const RegionRun factors[1] = {{data.first_factor, 0, data.num_factors()}};
  read_both_types(
      file, layout, vars, factors,
      [&](int64_t v) { return example_rows(data, data.var_offset, v); },
      [&](int64_t a) { return example_rows(data, data.factor_offset, a); }, data);
}

void read_compact_regions(const h5::File& file, const CompactLayout& layout,
                          const Dataset& structure, std::span<const int64_t> vars,
                          std::span<const int64_t> factors, std::span<const RegionRun> var_runs,
                          std::span<const RegionRun> factor_runs, Dataset& data) {
  // All of the examples' rows: a shard's regions may read any of their own example's.
  read_observation_rows(file, layout, structure.first_example,
                        structure.first_example + structure.num_examples(), data);
  read_both_types(
      file, layout, var_runs, factor_runs,
      [&](int64_t v) { return example_rows(data, structure.var_offset, vars[v]); },
      [&](int64_t a) { return example_rows(data, structure.factor_offset, factors[a]); }, data);
  // The shard is one example: its rows are all of them.
  data.obs_offset = {data.obs_offset.front(), data.obs_offset.back()};
}

void write_compact_features(h5::File& file, const Dataset& data) {
  if (!data.is_compact()) return;
  if (data.observations.num_rows() > 0 || reads_observations(data.var_types) ||
      reads_observations(data.factor_types)) {
    file.write("/examples/obs_offset", data.obs_offset);
    file.write("/obs/ptr",
               std::vector<int64_t>(data.observations.ptr.begin(), data.observations.ptr.end()));
    file.write("/obs/index", data.observations.index);
    if (!data.observations.value.empty()) file.write("/obs/value", data.observations.value);
  }
  write_types(file, kVarNames, data.var_types);
  write_types(file, kFactorNames, data.factor_types);
}

}  // namespace pdsp
