#pragma once
// Helpers of the data-set file tests: tiny data sets, temporary directories, and damage done
// to files with the HDF5 C API directly (independent of the code under test).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/parallel/communicator.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp::testing::files {

namespace fs = std::filesystem;
using pdsp::h5::Handle;

constexpr int32_t kNumParams = 6;

// A directory of its own per test, so tests never see each other's files and a failed test
// leaves nothing behind for the next run.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("pdsp_dataset_io_" + std::to_string(::getpid()) + "_" + std::string(info->name()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Several parameters in most rows, none in some, values that use every bit of the mantissa.
inline pdsp::FeatureRow feature_row(int64_t seed) {
  pdsp::FeatureRow row;
  const int64_t count = seed % 4;
  for (int64_t i = 0; i < count; ++i)
    row.emplace_back(static_cast<int32_t>((seed + 2 * i) % kNumParams),
                     static_cast<double>(seed - 3 * i) / 7.0);
  return row;
}

// Example 0: cards 2, 3, 4 with a pairwise and an arity-3 factor; example 1: a variable without
// features; example 2: a factor listing its variables in reverse order; example 3: no factor.
inline pdsp::Dataset build_dataset(int examples) {
  pdsp::DatasetBuilder builder(kNumParams);
  int64_t seed = 1;
  auto rows = [&seed](int64_t count) {
    std::vector<pdsp::FeatureRow> out;
    for (int64_t r = 0; r < count; ++r) out.push_back(feature_row(seed++));
    return out;
  };
  builder.begin_example();
  const int64_t a = builder.add_variable(2, 1, rows(2));
  const int64_t b = builder.add_variable(3, 0, rows(3));
  const int64_t c = builder.add_variable(4, 3, rows(4));
  builder.add_factor({a, b}, rows(6));
  builder.add_factor({a, b, c}, rows(24));
  if (examples > 1) {
    builder.begin_example();
    const int64_t d = builder.add_variable(2, 0, rows(2));
    const int64_t e = builder.add_variable(4, 2);
    builder.add_factor({d, e}, rows(8));
  }
  if (examples > 2) {
    builder.begin_example();
    const int64_t f = builder.add_variable(3, 2, rows(3));
    const int64_t g = builder.add_variable(2, 1, rows(2));
    builder.add_factor({g, f}, rows(6));
  }
  if (examples > 3) {
    builder.begin_example();
    builder.add_variable(4, 0, rows(4));
  }
  return builder.finish();
}

inline void add_optional_arrays(pdsp::Dataset& data) {
  data.var_counting.clear();
  data.factor_counting.clear();
  data.var_loss.clear();
  for (int64_t v = 0; v < data.num_vars(); ++v)
    data.var_counting.push_back(1.0 / static_cast<double>(v + 3));
  for (int64_t a = 0; a < data.num_factors(); ++a)
    data.factor_counting.push_back(-0.25 * static_cast<double>(a) + 1.0 / 3.0);
  for (int64_t s = 0; s < data.num_states(); ++s)
    data.var_loss.push_back(static_cast<double>(s % 3) / 11.0);
  data.counted = true;
}

// Bit patterns, so that a round trip must preserve -0.0 and the last mantissa bit.
inline std::vector<uint64_t> bits(const std::vector<double>& values) {
  std::vector<uint64_t> out;
  for (double x : values) out.push_back(std::bit_cast<uint64_t>(x));
  return out;
}

inline void expect_same_rows(const pdsp::SparseRows& actual, const pdsp::SparseRows& expected,
                             const std::string& what) {
  EXPECT_EQ(actual.ptr, expected.ptr) << what;
  EXPECT_EQ(actual.param, expected.param) << what;
  EXPECT_EQ(bits(actual.value), bits(expected.value)) << what;
}

inline void expect_same_dataset(const pdsp::Dataset& actual, const pdsp::Dataset& expected) {
  EXPECT_EQ(actual.num_params, expected.num_params);
  EXPECT_EQ(actual.first_example, expected.first_example);
  EXPECT_EQ(actual.first_var, expected.first_var);
  EXPECT_EQ(actual.first_factor, expected.first_factor);
  EXPECT_EQ(actual.first_state, expected.first_state);
  EXPECT_EQ(actual.first_table_entry, expected.first_table_entry);
  EXPECT_EQ(actual.file_examples, expected.file_examples);
  EXPECT_EQ(actual.var_offset, expected.var_offset);
  EXPECT_EQ(actual.factor_offset, expected.factor_offset);
  EXPECT_EQ(actual.card, expected.card);
  EXPECT_EQ(actual.label, expected.label);
  expect_same_rows(actual.var_features, expected.var_features, "var_features");
  EXPECT_EQ(actual.factor_var_ptr, expected.factor_var_ptr);
  EXPECT_EQ(actual.factor_vars, expected.factor_vars);
  expect_same_rows(actual.factor_features, expected.factor_features, "factor_features");
  EXPECT_EQ(bits(actual.var_counting), bits(expected.var_counting));
  EXPECT_EQ(bits(actual.factor_counting), bits(expected.factor_counting));
  EXPECT_EQ(bits(actual.var_loss), bits(expected.var_loss));
  EXPECT_EQ(actual.state_offset, expected.state_offset);
  EXPECT_EQ(actual.table_offset, expected.table_offset);
}

template <class T>
std::vector<T> part(const std::vector<T>& values, int64_t lo, int64_t hi) {
  if (values.empty()) return {};
  return std::vector<T>(values.begin() + lo, values.begin() + hi);
}

// Entries [lo, hi] of an offset array, shifted to start at zero.
template <class Index, class Allocator>
std::vector<Index, Allocator> rebased(const std::vector<Index, Allocator>& offsets, int64_t lo,
                                      int64_t hi) {
  std::vector<Index, Allocator> out;
  for (int64_t i = lo; i <= hi; ++i) out.push_back(static_cast<Index>(offsets[i] - offsets[lo]));
  return out;
}

inline pdsp::SparseRows row_range(const pdsp::SparseRows& rows, int64_t r0, int64_t r1) {
  pdsp::SparseRows out;
  out.ptr = rebased(rows.ptr, r0, r1);
  out.param = part(rows.param, rows.ptr[r0], rows.ptr[r1]);
  out.value = part(rows.value, rows.ptr[r0], rows.ptr[r1]);
  return out;
}

// Examples [first, last) of a whole data set, cut by hand the way read_examples should.
inline pdsp::Dataset expected_slice(const pdsp::Dataset& whole, int64_t first, int64_t last) {
  const int64_t v0 = whole.var_offset[first], v1 = whole.var_offset[last];
  const int64_t f0 = whole.factor_offset[first], f1 = whole.factor_offset[last];
  const int64_t s0 = whole.state_offset[v0], s1 = whole.state_offset[v1];
  const int64_t t0 = whole.table_offset[f0], t1 = whole.table_offset[f1];
  pdsp::Dataset out;
  out.num_params = whole.num_params;
  out.first_example = first;
  out.first_var = v0;
  out.first_factor = f0;
  out.first_state = s0;
  out.first_table_entry = t0;
  out.file_examples = whole.num_examples();
  out.var_offset.clear();
  out.factor_offset.clear();
  for (int64_t n = first; n <= last; ++n) {
    out.var_offset.push_back(whole.var_offset[n] - v0);
    out.factor_offset.push_back(whole.factor_offset[n] - f0);
  }
  out.card = part(whole.card, v0, v1);
  out.label = part(whole.label, v0, v1);
  out.var_features = row_range(whole.var_features, s0, s1);
  out.factor_var_ptr = rebased(whole.factor_var_ptr, f0, f1);
  for (int64_t k = whole.factor_var_ptr[f0]; k < whole.factor_var_ptr[f1]; ++k)
    out.factor_vars.push_back(static_cast<pdsp::LocalIndex>(whole.factor_vars[k] - v0));
  out.factor_features = row_range(whole.factor_features, t0, t1);
  out.var_counting = part(whole.var_counting, v0, v1);
  out.factor_counting = part(whole.factor_counting, f0, f1);
  out.var_loss = part(whole.var_loss, s0, s1);
  out.rebuild_offsets();
  return out;
}

// ---- Damaging files with the HDF5 C API directly, independent of the code under test. ----

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("test setup failed: " + what);
}

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
}

inline Handle open_raw(const std::string& path, unsigned flags) {
  Handle file(H5Fopen(path.c_str(), flags, H5P_DEFAULT), H5Fclose);
  require(file.get() >= 0, "open " + path);
  return file;
}

template <class T>
std::vector<T> read_raw(const std::string& path, const std::string& name) {
  const Handle file = open_raw(path, H5F_ACC_RDONLY);
  const Handle dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  require(dataset.get() >= 0, "open " + name);
  const Handle space(H5Dget_space(dataset.get()), H5Sclose);
  std::vector<T> values(static_cast<size_t>(H5Sget_simple_extent_npoints(space.get())));
  require(
      H5Dread(dataset.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0,
      "read " + name);
  return values;
}

// Deletes `name` (when present) and stores `values` under it with `file_type` and shape `dims`
// (1-D when empty).
template <class T>
void replace_raw(const std::string& path, const std::string& name, const std::vector<T>& values,
                 hid_t file_type, std::vector<hsize_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<hsize_t>(values.size())};
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0)
    require(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT) >= 0, "delete " + name);
  const Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose);
  const Handle dataset(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose);
  require(dataset.get() >= 0, "create " + name);
  if (!values.empty())
    require(H5Dwrite(dataset.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     values.data()) >= 0,
            "write " + name);
}

template <class T>
void edit_raw(const std::string& path, const std::string& name,
              const std::function<void(std::vector<T>&)>& edit) {
  std::vector<T> values = read_raw<T>(path, name);
  edit(values);
  replace_raw(path, name, values, native_type<T>());
}

inline void delete_raw(const std::string& path, const std::string& name) {
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  require(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT) >= 0, "delete " + name);
}

inline void delete_attribute_raw(const std::string& path, const std::string& name) {
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  require(H5Adelete(file.get(), name.c_str()) >= 0, "delete @" + name);
}

// Recreates root attribute `name` with `file_type` and shape `dims` (scalar when empty); `value`
// points to data of `memory_type`.
inline void write_attribute_raw(const std::string& path, const std::string& name, hid_t file_type,
                                hid_t memory_type, const void* value,
                                std::vector<hsize_t> dims = {}) {
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  if (H5Aexists(file.get(), name.c_str()) > 0)
    require(H5Adelete(file.get(), name.c_str()) >= 0, "delete @" + name);
  const Handle space(dims.empty()
                         ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                     H5Sclose);
  const Handle attribute(
      H5Acreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  require(attribute.get() >= 0, "create @" + name);
  require(H5Awrite(attribute.get(), memory_type, value) >= 0, "write @" + name);
}

inline void write_int_attribute_raw(const std::string& path, const std::string& name,
                                    hid_t file_type, int64_t value) {
  write_attribute_raw(path, name, file_type, H5T_NATIVE_INT64, &value);
}

inline void write_string_attribute_raw(const std::string& path, const std::string& name,
                                       const std::string& value, bool variable_length) {
  const Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (variable_length) {
    H5Tset_size(type.get(), H5T_VARIABLE);
    const char* text = value.c_str();
    write_attribute_raw(path, name, type.get(), type.get(), &text);
  } else {
    H5Tset_size(type.get(), value.size() + 1);
    H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
    write_attribute_raw(path, name, type.get(), type.get(), value.c_str());
  }
}

// ---- Expectations on errors. ----

inline std::string valid_file(const TempDir& dir, const pdsp::Dataset& data = build_dataset(3)) {
  const std::string path = dir.file("data.h5");
  pdsp::write_dataset(path, data);
  return path;
}

// The message of the InputError that reading `path` must raise (empty, and a failure, if none).
inline std::string read_error(const std::string& path) {
  try {
    (void)pdsp::read_dataset(path);
  } catch (const pdsp::InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "reading " << path << " raised no InputError";
  return {};
}

// A user must be able to find the problem: the file, the dataset and the index are all named.
inline void expect_error_names(const std::string& path, const std::vector<std::string>& parts) {
  const std::string message = read_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << "file path missing from: " << message;
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' missing from: " << message;
}

}  // namespace pdsp::testing::files
