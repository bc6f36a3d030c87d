#include "pdsp/data/dataset_fingerprint.hpp"

#include <algorithm>
#include <vector>

#include "pdsp/data/checksum.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {
namespace {

// The row offset a slice hashes for its examples when the file has no observation rows.
constexpr int64_t kNoRows = 0;

// The row pointers without their last entry, which the next slice starts with: every global
// position is hashed exactly once however the rows are split.
// Rows without entries all point at first_nnz, hashed without reading the pointers, whose
// zero pages would cost memory (row_pointers.hpp).
void add_rows(Checksum& sum, uint64_t tag, int64_t first_row, const SparseRows& rows) {
  const std::span<const LocalIndex> starts =
      std::span<const LocalIndex>(rows.ptr).first(rows.ptr.size() - 1);
  if (rows.nnz() == 0)
    sum.add_repeated(tag, first_row, static_cast<int64_t>(starts.size()), rows.first_nnz);
  else
    sum.add_shifted(tag, first_row, starts, rows.first_nnz);
  sum.add<int32_t>(tag + 1, rows.first_nnz, rows.param);
  sum.add<double>(tag + 2, rows.first_nnz, rows.value);
}

// Format 2's compact part. Observation rows are global positions, so the sum does not depend
// on the split either.
void add_compact(Checksum& sum, const Dataset& d, bool root) {
  const ObservationRows& obs = d.observations;
  const auto obs_examples = std::span<const int64_t>(d.obs_offset).first(d.obs_offset.size() - 1);
  sum.add_shifted(50, d.first_example, obs_examples, obs.first_row);
  sum.add_shifted(51, obs.first_row, std::span<const LocalIndex>(obs.ptr).first(obs.ptr.size() - 1),
                  obs.first_nnz);
  sum.add<int32_t>(52, obs.first_nnz, obs.index);
  sum.add<double>(53, obs.first_nnz, obs.value);
  const RegionTypes* kinds[2] = {&d.var_types, &d.factor_types};
  const int64_t first_region[2] = {d.first_var, d.first_factor};
  for (uint64_t kind = 0; kind < 2; ++kind) {
    const RegionTypes& types = *kinds[kind];
    const uint64_t tag = 60 + 10 * kind;
    if (root) {  // the type tables once, whatever the rank count
      sum.add<int64_t>(tag, 0, types.param_offset);
      sum.add<int32_t>(tag + 1, 0, types.dim);
    }
    sum.add<int32_t>(tag + 2, first_region[kind], types.type);
    std::vector<int64_t> rows(types.obs_row.begin(), types.obs_row.end());
    for (int64_t& row : rows)
      if (row >= 0) row += obs.first_row;
    sum.add<int64_t>(tag + 3, first_region[kind], rows);
  }
}

// Positions [first, last) of one array.
struct Positions {
  int64_t first, last;
};
// Part `part` of `parts` of [first, last).
Positions share_of(int64_t first, int64_t last, int part, int parts) {
  const int64_t n = last - first;
  return {first + n * part / parts, first + n * (part + 1) / parts};
}

constexpr int64_t kBlock = int64_t{1} << 20;

// The file's array `name` at positions p, as the slices hold it (type T), a block at a time.
template <class T>
void add_file_range(Checksum& sum, const h5::File& file, const std::string& name, uint64_t tag,
                    Positions p) {
  for (int64_t start = p.first; start < p.last; start += kBlock) {
    const std::vector<T> block = file.read<T>(name, start, std::min(kBlock, p.last - start));
    sum.add<T>(tag, start, std::span<const T>(block));
  }
}

// Feature rows p of one kind ("/vars" or "/factors"): the row pointers, then their entries. A
// file without rows hashes as a slice holds it: every row pointer 0.
int64_t add_file_rows(Checksum& sum, const h5::File& file, const std::string& group, uint64_t tag,
                      bool present, Positions rows) {
  if (!present) {
    const std::vector<int64_t> zeros(static_cast<size_t>(std::min(kBlock, rows.last - rows.first)));
    for (int64_t start = rows.first; start < rows.last; start += kBlock)
      sum.add<int64_t>(tag, start,
                       std::span<const int64_t>(zeros).first(std::min(kBlock, rows.last - start)));
    return 0;
  }
  add_file_range<int64_t>(sum, file, group + "/feat_ptr", tag, rows);
  const Positions entries{file.read<int64_t>(group + "/feat_ptr", rows.first, 1)[0],
                          file.read<int64_t>(group + "/feat_ptr", rows.last, 1)[0]};
  add_file_range<int32_t>(sum, file, group + "/feat_param", tag + 1, entries);
  add_file_range<double>(sum, file, group + "/feat_value", tag + 2, entries);
  return entries.last - entries.first;
}

// One kind's types at regions p: the type, and the observation row of the regions that read one
// (-1 for the others, as a slice keeps them).
void add_file_types(Checksum& sum, const h5::File& file, const RegionTypes& tables,
                    const std::string& kind, uint64_t tag, bool root, Positions p) {
  if (root) {
    sum.add<int64_t>(tag, 0, tables.param_offset);
    sum.add<int32_t>(tag + 1, 0, tables.dim);
  }
  if (!tables.present) return;
  add_file_range<int32_t>(sum, file, kind + "/type", tag + 2, p);
  if (std::none_of(tables.dim.begin(), tables.dim.end(), [](int32_t d) { return d > 0; })) return;
  for (int64_t start = p.first; start < p.last; start += kBlock) {
    const int64_t n = std::min(kBlock, p.last - start);
    const std::vector<int32_t> type = file.read<int32_t>(kind + "/type", start, n);
    std::vector<int64_t> rows = file.read<int64_t>(kind + "/obs_row", start, n);
    for (int64_t i = 0; i < n; ++i)
      if (type[i] < 0 || tables.dim[type[i]] == 0) rows[i] = -1;
    sum.add<int64_t>(tag + 3, start, std::span<const int64_t>(rows));
  }
}

}  // namespace

void fingerprint_example_part(const DatasetLayout& layout, int64_t first, int64_t last, int part,
                              int parts, bool root, Checksum& sum, std::array<int64_t, 5>& sizes) {
  const h5::File file = h5::File::open_read(layout.path);
  const auto share = [&](const std::vector<int64_t>& offset) {
    return share_of(offset[first], offset[last], part, parts);
  };
  const Positions vars = share(layout.var_offset), factors = share(layout.factor_offset);
  const Positions states = share(layout.state_offset), tables = share(layout.table_offset);
  if (part == 0) {
    const auto examples = static_cast<size_t>(last - first);
    sum.add<int64_t>(1, first, std::span(layout.var_offset).subspan(first, examples));
    sum.add<int64_t>(2, first, std::span(layout.factor_offset).subspan(first, examples));
  }
  add_file_range<int32_t>(sum, file, "/vars/card", 3, vars);
  if (layout.has_labels) add_file_range<int32_t>(sum, file, "/vars/label", 4, vars);
  int64_t nnz = add_file_rows(sum, file, "/vars", 10, layout.has_var_rows, states);
  add_file_range<int64_t>(sum, file, "/factors/var_ptr", 20, factors);
  add_file_range<int64_t>(sum, file, "/factors/vars", 21, share(layout.slot_offset));
  nnz += add_file_rows(sum, file, "/factors", 30, layout.has_factor_rows, tables);
  if (layout.has_var_counting) add_file_range<double>(sum, file, "/vars/counting", 40, vars);
  if (layout.has_factor_counting)
    add_file_range<double>(sum, file, "/factors/counting", 41, factors);
  if (layout.has_loss) add_file_range<double>(sum, file, "/vars/loss", 42, states);
  const CompactLayout& compact = layout.compact;
  if (compact.var_types.present || compact.factor_types.present) {
    if (compact.obs_offset.empty()) {
      if (part == 0)
        for (int64_t n = first; n < last; ++n)
          sum.add<int64_t>(50, n, std::span<const int64_t>(&kNoRows, 1));
    } else {
      if (part == 0)
        sum.add<int64_t>(
            50, first,
            std::span(compact.obs_offset).subspan(first, static_cast<size_t>(last - first)));
      const Positions rows = share(compact.obs_offset);
      add_file_range<int64_t>(sum, file, "/obs/ptr", 51, rows);
      const Positions entries{file.read<int64_t>("/obs/ptr", rows.first, 1)[0],
                              file.read<int64_t>("/obs/ptr", rows.last, 1)[0]};
      add_file_range<int32_t>(sum, file, "/obs/index", 52, entries);
      if (compact.has_obs_values) add_file_range<double>(sum, file, "/obs/value", 53, entries);
    }
    add_file_types(sum, file, compact.var_types, "/vars", 60, root, vars);
    add_file_types(sum, file, compact.factor_types, "/factors", 70, root, factors);
  }
  sizes = {vars.last - vars.first, factors.last - factors.first, states.last - states.first,
           tables.last - tables.first, nnz};
}

void fingerprint_part(const Dataset& d, bool root, Checksum& sum, std::array<int64_t, 5>& sizes) {
  const auto examples = std::span<const int64_t>(d.var_offset).first(d.var_offset.size() - 1);
  const auto factors = std::span<const int64_t>(d.factor_offset).first(d.factor_offset.size() - 1);
  sum.add_shifted(1, d.first_example, examples, d.first_var);
  sum.add_shifted(2, d.first_example, factors, d.first_factor);
  sum.add<int32_t>(3, d.first_var, d.card);
  sum.add<int32_t>(4, d.first_var, d.label);
  add_rows(sum, 10, d.first_state, d.var_features);
  const auto var_ptr =
      std::span<const LocalIndex>(d.factor_var_ptr).first(d.factor_var_ptr.size() - 1);
  sum.add_shifted(20, d.first_factor, var_ptr, d.first_slot);
  sum.add_shifted(21, d.first_slot, std::span<const LocalIndex>(d.factor_vars), d.first_var);
  add_rows(sum, 30, d.first_table_entry, d.factor_features);
  sum.add<double>(40, d.first_var, d.var_counting);
  sum.add<double>(41, d.first_factor, d.factor_counting);
  sum.add<double>(42, d.first_state, d.var_loss);
  if (d.is_compact()) add_compact(sum, d, root);  // a format-1 file keeps the fingerprint it had
  sizes = {d.num_vars(), d.num_factors(), d.num_states(), d.num_table_entries(),
           d.var_features.nnz() + d.factor_features.nnz()};
}

namespace {

// The checksum of every rank's slice and the summed sizes (collective).
Checksum combined_sum(const Dataset& d, Communicator& comm, std::array<int64_t, 5>& sizes) {
  Checksum sum;
  if (d.shard) {
    sum = d.shard->fingerprint;
    sizes = d.shard->fingerprint_sizes;
  } else {
    fingerprint_part(d, comm.is_root(), sum, sizes);
  }
  sum.combine(comm);
  comm.allreduce_sum(std::span<int64_t>(sizes));
  return sum;
}

}  // namespace

std::string dataset_checksum(const Dataset& d, Communicator& comm) {
  std::array<int64_t, 5> sizes{};
  return combined_sum(d, comm, sizes).hex();
}

std::string dataset_fingerprint(const Dataset& d, Communicator& comm) {
  std::array<int64_t, 5> sizes{};
  const Checksum sum = combined_sum(d, comm, sizes);
  return "examples=" + std::to_string(d.file_examples) + " variables=" + std::to_string(sizes[0]) +
         " factors=" + std::to_string(sizes[1]) + " states=" + std::to_string(sizes[2]) +
         " table_entries=" + std::to_string(sizes[3]) + " nnz=" + std::to_string(sizes[4]) +
         " params=" + std::to_string(d.num_params) + " checksum=" + sum.hex();
}

}  // namespace pdsp
