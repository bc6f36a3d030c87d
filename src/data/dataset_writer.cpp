#include <algorithm>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/nonlocal_terms_io.hpp"

namespace pdsp {
namespace {

// The file holds 64-bit offsets (design.md §7); they are widened a block at a time so that no
// 64-bit copy of a large array is ever held whole.
void write_widened(h5::File& file, const std::string& name, std::span<const LocalIndex> local) {
  constexpr size_t kBlock = size_t{1} << 20;
  file.create_dataset<int64_t>(name, static_cast<int64_t>(local.size()));
  std::vector<int64_t> block;
  for (size_t start = 0; start < local.size(); start += kBlock) {
    block.assign(
        local.begin() + static_cast<std::ptrdiff_t>(start),
        local.begin() + static_cast<std::ptrdiff_t>(std::min(local.size(), start + kBlock)));
    file.write_slice(name, static_cast<int64_t>(start), block);
  }
}

void write_rows(h5::File& file, const std::string& group, const SparseRows& rows,
                bool may_leave_out) {
  if (may_leave_out && rows.nnz() == 0) return;
  write_widened(file, group + "/feat_ptr", rows.ptr);
  file.write(group + "/feat_param", rows.param);
  file.write(group + "/feat_value", rows.value);
}

}  // namespace

void write_dataset(const std::string& path, const Dataset& data, const Provenance& provenance) {
  write_output(path, [&](const std::string& temporary) {
    h5::File file = h5::File::create(temporary);
    file.write_attribute("format", std::string(kDatasetFormat));
    const bool compact = data.is_compact();
    file.write_attribute("format_version", compact ? kDatasetFormatVersion : int64_t{1});
    file.write_attribute("num_params", data.num_params);
    write_provenance(file, provenance);
    file.write("/examples/var_offset", data.var_offset);
    file.write("/examples/factor_offset", data.factor_offset);
    file.write("/vars/card", data.card);
    if (data.has_labels()) file.write("/vars/label", data.label);
    // Format 2 leaves out feature rows that are all empty: a row pointer per state or table
    // entry is most of the size of a compact file.
    write_rows(file, "/vars", data.var_features, compact);
    write_widened(file, "/factors/var_ptr", data.factor_var_ptr);
    write_widened(file, "/factors/vars", data.factor_vars);
    write_rows(file, "/factors", data.factor_features, compact);
    write_compact_features(file, data);
    write_nonlocal_terms(file, data);
    if (!data.var_counting.empty()) file.write("/vars/counting", data.var_counting);
    if (!data.factor_counting.empty()) file.write("/factors/counting", data.factor_counting);
    if (!data.var_loss.empty()) file.write("/vars/loss", data.var_loss);
  });
}

}  // namespace pdsp
