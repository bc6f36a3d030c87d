#include <algorithm>
#include <cmath>
#include <limits>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/nonlocal_terms_io.hpp"
#include "pdsp/data/reader_checks.hpp"

namespace pdsp {
namespace {

// Largest factor table pdsp accepts; a product of cardinalities beyond it is a corrupt file
// rather than a model anyone can store messages for.
constexpr int64_t kMaxTableSize = int64_t{1} << 32;

void check_header(const h5::File& file, DatasetLayout& layout) {
  const std::string& path = file.path();
  const std::string format = file.read_string_attribute("format");
  if (format != kDatasetFormat)
    throw_file_error(path, "@format", "is '" + format + "', expected '" + kDatasetFormat + "'");
  const int64_t version = file.read_int_attribute("format_version");
  if (version < 1 || version > kDatasetFormatVersion)
    throw_file_error(path, "@format_version",
                     "unknown version " + std::to_string(version) + " (this pdsp reads 1 to " +
                         std::to_string(kDatasetFormatVersion) + ")");
  layout.format_version = version;
  layout.num_params = file.read_int_attribute("num_params");
  if (layout.num_params < 1 || layout.num_params > INT32_MAX)
    throw_file_error(path, "@num_params",
                     "must be in [1, 2^31), got " + std::to_string(layout.num_params));
}

// Reads card, the factor lists and their variables for examples [first, last), checks them and
// fills `data` with local indices. The global positions come from `layout`'s offsets.
void read_structure_into(const h5::File& file, const DatasetLayout& layout, int64_t first,
                         int64_t last, Dataset& data) {
  const std::string& path = file.path();
  const int64_t v0 = layout.var_offset[first], v1 = layout.var_offset[last];
  const int64_t f0 = layout.factor_offset[first], f1 = layout.factor_offset[last];
  data.first_example = first;
  data.first_var = v0;
  data.first_factor = f0;
  data.file_examples = layout.num_examples();
  data.num_params = layout.num_params;
  data.var_offset.resize(static_cast<size_t>(last - first + 1));
  data.factor_offset.resize(static_cast<size_t>(last - first + 1));
  for (int64_t n = first; n <= last; ++n) {
    data.var_offset[n - first] = layout.var_offset[n] - v0;
    data.factor_offset[n - first] = layout.factor_offset[n] - f0;
  }

  data.card = file.read<int32_t>("/vars/card", v0, v1 - v0);
  for (int64_t v = 0; v < v1 - v0; ++v)
    if (data.card[v] < 1)
      throw_file_error(path, "/vars/card", v0 + v,
                       "cardinality must be >= 1, got " + std::to_string(data.card[v]));

  const int64_t slots = file.length("/factors/vars");
  const int64_t s0 = file.read<int64_t>("/factors/var_ptr", f0, 1)[0];
  if (f0 == 0 && s0 != 0) throw_file_error(path, "/factors/var_ptr", 0, "must start at 0");
  if (s0 < 0 || s0 > slots)
    throw_file_error(path, "/factors/var_ptr", f0, "points past the end of /factors/vars");
  int64_t previous = s0;
  data.factor_var_ptr =
      read_local(file, "/factors/var_ptr", f0, f1 - f0 + 1, s0, [&](int64_t a, int64_t p) {
        if (a > f0 && p <= previous)
          throw_file_error(path, "/factors/var_ptr", a,
                           "must increase (every factor needs at least one variable)");
        if (p > slots)
          throw_file_error(path, "/factors/var_ptr", a, "points past the end of /factors/vars");
        previous = p;
      });
  if (f1 == layout.num_factors() && previous != slots)
    throw_file_error(path, "/factors/var_ptr", f1,
                     "is " + std::to_string(previous) + ", expected the length " +
                         std::to_string(slots) + " of /factors/vars");

  // Slot k (local) names variable v (global) outside the example of its factor.
  const auto variable_outside = [&](int64_t k, int64_t v) {
    const auto& ptr = data.factor_var_ptr;
    const int64_t a = std::upper_bound(ptr.begin(), ptr.end(), k) - ptr.begin() - 1;
    const auto& offsets = data.factor_offset;
    const int64_t n = std::upper_bound(offsets.begin(), offsets.end(), a) - offsets.begin() - 1;
    throw_file_error(path, "/factors/vars", s0 + k,
                     "variable " + std::to_string(v) + " of factor " + std::to_string(f0 + a) +
                         " is not in its example " + std::to_string(first + n) + " (variables " +
                         std::to_string(v0 + data.var_offset[n]) + ".." +
                         std::to_string(v0 + data.var_offset[n + 1] - 1) + ")");
  };
  // Variables outside the slice are caught while reading; outside their own example, below.
  data.factor_vars =
      read_local(file, "/factors/vars", s0, previous - s0, v0, [&](int64_t k, int64_t v) {
        if (v < v0 || v >= v1) variable_outside(k - s0, v);
      });
  data.first_slot = s0;

  for (int64_t n = 0; n < last - first; ++n) {
    const int64_t lo = data.var_offset[n], hi = data.var_offset[n + 1];
    for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a) {
      int64_t table = 1;
      for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k) {
        const int64_t v = data.factor_vars[k];
        if (v < lo || v >= hi) variable_outside(k, v0 + v);
        for (int64_t j = data.factor_var_ptr[a]; j < k; ++j)
          if (data.factor_vars[j] == v)
            throw_file_error(path, "/factors/vars", s0 + k,
                             "variable " + std::to_string(v0 + v) + " appears twice in factor " +
                                 std::to_string(f0 + a));
        table *= data.card[v];
        if (table > kMaxTableSize)
          throw_file_error(path, "/factors/var_ptr", f0 + a, "factor table is too large");
      }
    }
  }
  data.rebuild_offsets(path);
}

// Whether `group` has feature rows (format 1 requires them; in format 2 the three arrays are
// there together or not at all), with one row pointer per row and one more.
bool has_feature_rows(const h5::File& file, const std::string& group, int64_t format_version,
                      int64_t rows, const std::string& what) {
  const std::string ptr = group + "/feat_ptr";
  if (format_version >= 2 && !file.exists(ptr)) {
    for (const std::string& name : {group + "/feat_param", group + "/feat_value"})
      if (file.exists(name))
        throw_file_error(file.path(), ptr, "is missing, but " + name + " is there");
    return false;
  }
  if (file.length(ptr) != rows + 1)
    throw_file_error(file.path(), ptr,
                     "has length " + std::to_string(file.length(ptr)) + ", expected " +
                         std::to_string(rows + 1) + " (" + what + " + 1)");
  return true;
}

}  // namespace

DatasetLayout scan_dataset(const std::string& path, Communicator& comm) {
  DatasetLayout layout;
  layout.path = path;
  run_collectively(comm, [&] {
    const h5::File file = h5::File::open_read(path);
    check_header(file, layout);
    layout.var_offset = file.read_all<int64_t>("/examples/var_offset");
    layout.factor_offset = file.read_all<int64_t>("/examples/factor_offset");
    if (layout.var_offset.size() < 2)
      throw_file_error(path, "/examples/var_offset", "the file holds no example");
    if (layout.factor_offset.size() != layout.var_offset.size())
      throw_file_error(path, "/examples/factor_offset",
                       "has length " + std::to_string(layout.factor_offset.size()) + ", expected " +
                           std::to_string(layout.var_offset.size()) +
                           " (the length of /examples/var_offset)");
    check_offsets(path, "/examples/var_offset", layout.var_offset, true, file.length("/vars/card"));
    check_offsets(path, "/examples/factor_offset", layout.factor_offset, false,
                  file.length("/factors/var_ptr") - 1);
    layout.has_labels = check_optional_length(file, "/vars/label", layout.num_vars());
    layout.has_var_counting = check_optional_length(file, "/vars/counting", layout.num_vars());
    layout.has_factor_counting =
        check_optional_length(file, "/factors/counting", layout.num_factors());
    layout.compact =
        scan_compact_features(file, layout.format_version, layout.num_params, layout.num_examples(),
                              layout.num_vars(), layout.num_factors());
    layout.nonlocal = scan_nonlocal_terms(file, layout.num_examples());
    if (layout.has_var_counting != layout.has_factor_counting)
      throw_file_error(path, layout.has_var_counting ? "/factors/counting" : "/vars/counting",
                       "is missing: counting numbers need both /vars/counting and "
                       "/factors/counting");
  });

  // Each rank checks the graph of an equal share of the examples and measures their sizes.
  const int64_t examples = layout.num_examples();
  std::vector<int64_t> sizes(static_cast<size_t>(3 * examples), 0);  // states, table, slots
  run_collectively(comm, [&] {
    const h5::File file = h5::File::open_read(path);
    const int64_t first = examples * comm.rank() / comm.size();
    const int64_t last = examples * (comm.rank() + 1) / comm.size();
    Dataset share;
    read_structure_into(file, layout, first, last, share);
    for (int64_t n = first; n < last; ++n) {
      const int64_t local = n - first;
      sizes[3 * n] = share.state_offset[share.var_offset[local + 1]] -
                     share.state_offset[share.var_offset[local]];
      sizes[3 * n + 1] = share.table_offset[share.factor_offset[local + 1]] -
                         share.table_offset[share.factor_offset[local]];
      sizes[3 * n + 2] = share.factor_var_ptr[share.factor_offset[local + 1]] -
                         share.factor_var_ptr[share.factor_offset[local]];
    }
  });
  comm.allreduce_sum(std::span<int64_t>(sizes));

  layout.state_offset.assign(static_cast<size_t>(examples) + 1, 0);
  layout.table_offset.assign(static_cast<size_t>(examples) + 1, 0);
  layout.slot_offset.assign(static_cast<size_t>(examples) + 1, 0);
  layout.cost.resize(static_cast<size_t>(examples));
  for (int64_t n = 0; n < examples; ++n) {
    layout.state_offset[n + 1] = layout.state_offset[n] + sizes[3 * n];
    layout.table_offset[n + 1] = layout.table_offset[n] + sizes[3 * n + 1];
    layout.slot_offset[n + 1] = layout.slot_offset[n] + sizes[3 * n + 2];
    // One sweep touches every table entry once per factor variable and every state once.
    const double average_arity =
        sizes[3 * n + 2] > 0
            ? static_cast<double>(sizes[3 * n + 2]) /
                  static_cast<double>(layout.factor_offset[n + 1] - layout.factor_offset[n])
            : 0.0;
    layout.cost[n] =
        static_cast<double>(sizes[3 * n]) + average_arity * static_cast<double>(sizes[3 * n + 1]);
  }

  run_collectively(comm, [&] {
    const h5::File file = h5::File::open_read(path);
    layout.has_loss = check_optional_length(file, "/vars/loss", layout.state_offset.back());
    layout.has_var_rows = has_feature_rows(file, "/vars", layout.format_version,
                                           layout.state_offset.back(), "states");
    layout.has_factor_rows = has_feature_rows(file, "/factors", layout.format_version,
                                              layout.table_offset.back(), "factor table entries");
  });
  return layout;
}

Dataset read_examples(const DatasetLayout& layout, int64_t first, int64_t last) {
  const h5::File file = h5::File::open_read(layout.path);
  Dataset data;
  read_structure_into(file, layout, first, last, data);
  data.file_path = layout.path;
  data.first_state = layout.state_offset[first];
  data.first_table_entry = layout.table_offset[first];
  data.labelled = layout.has_labels;
  data.counted = layout.has_var_counting && layout.has_factor_counting;
  const int64_t vars = data.num_vars();
  if (layout.has_labels) {
    data.label = file.read<int32_t>("/vars/label", data.first_var, vars);
    check_labels(layout.path, data.first_var, data.label, data.card);
  }
  read_features(file, "/vars", layout.has_var_rows, data.first_state, data.num_states(),
                layout.num_params, data.var_features);
  read_features(file, "/factors", layout.has_factor_rows, data.first_table_entry,
                data.num_table_entries(), layout.num_params, data.factor_features);
  read_compact_features(file, layout.compact, first, last, data);
  select_nonlocal_terms(layout.nonlocal, first, last, data);
  if (layout.has_var_counting)
    data.var_counting = read_finite(file, "/vars/counting", data.first_var, vars);
  if (layout.has_factor_counting)
    data.factor_counting =
        read_finite(file, "/factors/counting", data.first_factor, data.num_factors());
  if (layout.has_loss)
    data.var_loss = read_finite(file, "/vars/loss", data.first_state, data.num_states());
  return data;
}

Dataset read_structure(const DatasetLayout& layout, int64_t first, int64_t last) {
  const h5::File file = h5::File::open_read(layout.path);
  Dataset data;
  read_structure_into(file, layout, first, last, data);
  data.file_path = layout.path;
  return data;
}

Dataset read_dataset(const std::string& path) {
  SerialCommunicator serial;
  try {
    const DatasetLayout layout = scan_dataset(path, serial);
    return read_examples(layout, 0, layout.num_examples());
  } catch (const CollectiveError& error) {
    throw InputError(error.what());
  }
}

}  // namespace pdsp
