#include "pdsp/data/reader_checks.hpp"

#include <cmath>

namespace pdsp {

// Offsets must start at 0, never decrease (or strictly increase), and end at `end`.
void check_offsets(const std::string& path, const std::string& name,
                   const std::vector<int64_t>& offsets, bool strictly, int64_t end) {
  if (offsets.empty()) throw_file_error(path, name, "is empty: offsets start with a 0");
  if (offsets[0] != 0) throw_file_error(path, name, 0, "must start at 0");
  for (size_t i = 1; i < offsets.size(); ++i) {
    const bool bad = strictly ? offsets[i] <= offsets[i - 1] : offsets[i] < offsets[i - 1];
    if (bad)
      throw_file_error(path, name, static_cast<int64_t>(i),
                       strictly ? "must increase (every entry needs at least one element)"
                                : "must not decrease");
  }
  if (offsets.back() != end)
    throw_file_error(path, name, static_cast<int64_t>(offsets.size()) - 1,
                     "is " + std::to_string(offsets.back()) + ", expected the length " +
                         std::to_string(end) + " of the array it indexes");
}

bool block_fits(int64_t offset, int64_t count, int64_t width, int64_t limit) {
  if (offset > limit) return false;
  return width == 0 || count <= (limit - offset) / width;
}

bool check_optional_length(const h5::File& file, const std::string& name, int64_t expected) {
  if (!file.exists(name)) return false;
  if (file.length(name) != expected)
    throw_file_error(file.path(), name,
                     "has length " + std::to_string(file.length(name)) + ", expected " +
                         std::to_string(expected));
  return true;
}

void check_labels(const std::string& path, int64_t first, std::span<const int32_t> label,
                  std::span<const int32_t> card) {
  for (size_t v = 0; v < label.size(); ++v)
    if (label[v] < -1 || label[v] >= card[v])
      throw_file_error(path, "/vars/label", first + static_cast<int64_t>(v),
                       "label " + std::to_string(label[v]) + " is outside [0, " +
                           std::to_string(card[v]) + ") and not -1 (unobserved)");
}

std::vector<double> read_finite(const h5::File& file, const std::string& name, int64_t offset,
                                int64_t count) {
  std::vector<double> values = file.read<double>(name, offset, count);
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i]))
      throw_file_error(file.path(), name, offset + i, "value is not finite");
  return values;
}

RowPointers read_row_pointers(const h5::File& file, const std::string& ptr_name,
                              const std::string& entries_name, int64_t row0, int64_t rows,
                              int64_t nnz_total, int64_t& first_entry) {
  const std::string& path = file.path();
  first_entry = file.read<int64_t>(ptr_name, row0, 1)[0];
  if (row0 == 0 && first_entry != 0) throw_file_error(path, ptr_name, 0, "must start at 0");
  int64_t previous = first_entry;
  RowPointers ptr = read_local<RowPointers>(
      file, ptr_name, row0, rows + 1, first_entry, [&](int64_t i, int64_t k) {
        if (k < previous) throw_file_error(path, ptr_name, i, "must not decrease");
        if (k < 0 || k > nnz_total)
          throw_file_error(path, ptr_name, i, "points past the end of " + entries_name);
        previous = k;
      });
  if (row0 + rows + 1 == file.length(ptr_name) && previous != nnz_total)
    throw_file_error(path, ptr_name, row0 + rows,
                     "is " + std::to_string(previous) + ", expected the length " +
                         std::to_string(nnz_total) + " of " + entries_name);
  return ptr;
}

void read_features(const h5::File& file, const std::string& group, bool present, int64_t row0,
                   int64_t rows, int64_t num_params, SparseRows& out) {
  if (!present) {
    out.ptr = RowPointers(static_cast<size_t>(rows) + 1);
    return;
  }
  const std::string& path = file.path();
  const std::string ptr_name = group + "/feat_ptr";
  const int64_t nnz_total = file.length(group + "/feat_param");
  if (file.length(group + "/feat_value") != nnz_total)
    throw_file_error(path, group + "/feat_value",
                     "has length " + std::to_string(file.length(group + "/feat_value")) +
                         ", expected the length " + std::to_string(nnz_total) + " of " + group +
                         "/feat_param");
  int64_t k0 = 0;
  out.ptr = read_row_pointers(file, ptr_name, group + "/feat_param", row0, rows, nnz_total, k0);
  const int64_t count = out.ptr.back();
  out.param = file.read<int32_t>(group + "/feat_param", k0, count);
  out.value = file.read<double>(group + "/feat_value", k0, count);
  for (int64_t k = 0; k < count; ++k) {
    if (out.param[k] < 0 || out.param[k] >= num_params)
      throw_file_error(path, group + "/feat_param", k0 + k,
                       "parameter index " + std::to_string(out.param[k]) + " is outside [0, " +
                           std::to_string(num_params) + ")");
    if (!std::isfinite(out.value[k]))
      throw_file_error(path, group + "/feat_value", k0 + k, "value is not finite");
  }
  out.first_nnz = k0;
}

}  // namespace pdsp
