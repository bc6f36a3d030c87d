#include "pdsp/data/dataset_fingerprint.hpp"

#include <vector>

#include "pdsp/data/checksum.hpp"

namespace pdsp {
namespace {

// The row pointers without their last entry, which the next slice starts with: every global
// position is hashed exactly once however the rows are split.
void add_rows(Checksum& sum, uint64_t tag, int64_t first_row, const SparseRows& rows) {
  sum.add_shifted(tag, first_row, std::span<const LocalIndex>(rows.ptr).first(rows.ptr.size() - 1),
                  rows.first_nnz);
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

}  // namespace

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

std::string dataset_fingerprint(const Dataset& d, Communicator& comm) {
  Checksum sum;
  std::array<int64_t, 5> sizes{};
  if (d.shard) {
    sum = d.shard->fingerprint;
    sizes = d.shard->fingerprint_sizes;
  } else {
    fingerprint_part(d, comm.is_root(), sum, sizes);
  }
  sum.combine(comm);
  comm.allreduce_sum(std::span<int64_t>(sizes));
  return "examples=" + std::to_string(d.file_examples) + " variables=" + std::to_string(sizes[0]) +
         " factors=" + std::to_string(sizes[1]) + " states=" + std::to_string(sizes[2]) +
         " table_entries=" + std::to_string(sizes[3]) + " nnz=" + std::to_string(sizes[4]) +
         " params=" + std::to_string(d.num_params) + " checksum=" + sum.hex();
}

}  // namespace pdsp
