// Reading and writing the pdsp-dataset HDF5 format (design.md section 7): exact round trips,
// one InputError per kind of damage, the tolerances the format promises, slices, model files.
#include "pdsp/data/dataset_io.hpp"

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
#include "pdsp/data/errors.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace {

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
pdsp::FeatureRow feature_row(int64_t seed) {
  pdsp::FeatureRow row;
  const int64_t count = seed % 4;
  for (int64_t i = 0; i < count; ++i)
    row.emplace_back(static_cast<int32_t>((seed + 2 * i) % kNumParams),
                     static_cast<double>(seed - 3 * i) / 7.0);
  return row;
}

// Example 0: cards 2, 3, 4 with a pairwise and an arity-3 factor; example 1: a variable without
// features; example 2: a factor listing its variables in reverse order; example 3: no factor.
pdsp::Dataset build_dataset(int examples) {
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

void add_optional_arrays(pdsp::Dataset& data) {
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
std::vector<uint64_t> bits(const std::vector<double>& values) {
  std::vector<uint64_t> out;
  for (double x : values) out.push_back(std::bit_cast<uint64_t>(x));
  return out;
}

void expect_same_rows(const pdsp::SparseRows& actual, const pdsp::SparseRows& expected,
                      const std::string& what) {
  EXPECT_EQ(actual.ptr, expected.ptr) << what;
  EXPECT_EQ(actual.param, expected.param) << what;
  EXPECT_EQ(bits(actual.value), bits(expected.value)) << what;
}

void expect_same_dataset(const pdsp::Dataset& actual, const pdsp::Dataset& expected) {
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
std::vector<int64_t> rebased(const std::vector<int64_t>& offsets, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t i = lo; i <= hi; ++i) out.push_back(offsets[i] - offsets[lo]);
  return out;
}

pdsp::SparseRows row_range(const pdsp::SparseRows& rows, int64_t r0, int64_t r1) {
  pdsp::SparseRows out;
  out.ptr = rebased(rows.ptr, r0, r1);
  out.param = part(rows.param, rows.ptr[r0], rows.ptr[r1]);
  out.value = part(rows.value, rows.ptr[r0], rows.ptr[r1]);
  return out;
}

// Examples [first, last) of a whole data set, cut by hand the way read_examples should.
pdsp::Dataset expected_slice(const pdsp::Dataset& whole, int64_t first, int64_t last) {
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
    out.factor_vars.push_back(whole.factor_vars[k] - v0);
  out.factor_features = row_range(whole.factor_features, t0, t1);
  out.var_counting = part(whole.var_counting, v0, v1);
  out.factor_counting = part(whole.factor_counting, f0, f1);
  out.var_loss = part(whole.var_loss, s0, s1);
  out.rebuild_offsets();
  return out;
}

// ---- Damaging files with the HDF5 C API directly, independent of the code under test. ----

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("test setup failed: " + what);
}

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
}

Handle open_raw(const std::string& path, unsigned flags) {
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

void delete_raw(const std::string& path, const std::string& name) {
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  require(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT) >= 0, "delete " + name);
}

void delete_attribute_raw(const std::string& path, const std::string& name) {
  const Handle file = open_raw(path, H5F_ACC_RDWR);
  require(H5Adelete(file.get(), name.c_str()) >= 0, "delete @" + name);
}

// Recreates root attribute `name` with `file_type` and shape `dims` (scalar when empty); `value`
// points to data of `memory_type`.
void write_attribute_raw(const std::string& path, const std::string& name, hid_t file_type,
                         hid_t memory_type, const void* value, std::vector<hsize_t> dims = {}) {
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

void write_int_attribute_raw(const std::string& path, const std::string& name, hid_t file_type,
                             int64_t value) {
  write_attribute_raw(path, name, file_type, H5T_NATIVE_INT64, &value);
}

void write_string_attribute_raw(const std::string& path, const std::string& name,
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

std::string valid_file(const TempDir& dir, const pdsp::Dataset& data = build_dataset(3)) {
  const std::string path = dir.file("data.h5");
  pdsp::write_dataset(path, data);
  return path;
}

// The message of the InputError that reading `path` must raise (empty, and a failure, if none).
std::string read_error(const std::string& path) {
  try {
    (void)pdsp::read_dataset(path);
  } catch (const pdsp::InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "reading " << path << " raised no InputError";
  return {};
}

// A user must be able to find the problem: the file, the dataset and the index are all named.
void expect_error_names(const std::string& path, const std::vector<std::string>& parts) {
  const std::string message = read_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << "file path missing from: " << message;
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' missing from: " << message;
}

// ---- 1. Round trip. ----

TEST(DatasetIo, RoundTripPreservesEveryArrayExactly) {
  const TempDir dir;
  const pdsp::Dataset original = build_dataset(3);
  // The builder must have produced what the test claims to cover.
  ASSERT_EQ(original.num_examples(), 3);
  ASSERT_EQ(original.arity(1), 3);
  ASSERT_TRUE(original.has_labels());
  ASSERT_GT(original.var_features.nnz(), 10);
  const std::string path = valid_file(dir, original);
  const pdsp::Dataset read = pdsp::read_dataset(path);
  expect_same_dataset(read, original);
  EXPECT_FALSE(read.has_counting());
  EXPECT_TRUE(read.var_loss.empty());
}

TEST(DatasetIo, RoundTripPreservesOptionalCountingAndLoss) {
  const TempDir dir;
  pdsp::Dataset original = build_dataset(3);
  add_optional_arrays(original);
  original.var_counting[1] = -0.0;
  const std::string path = valid_file(dir, original);
  const pdsp::Dataset read = pdsp::read_dataset(path);
  expect_same_dataset(read, original);
  EXPECT_TRUE(read.has_counting());
}

TEST(DatasetIo, UnlabelledDataRoundTripsWithoutLabels) {
  const TempDir dir;
  pdsp::DatasetBuilder builder(2);
  builder.begin_example();
  const int64_t a = builder.add_variable(3, -1, {{{0, 1.5}}, {}, {{1, -2.0}, {0, 0.5}}});
  const int64_t b = builder.add_variable(2, -1);
  builder.add_factor({a, b});
  const pdsp::Dataset original = builder.finish();
  ASSERT_FALSE(original.has_labels());
  const std::string path = valid_file(dir, original);
  const pdsp::Dataset read = pdsp::read_dataset(path);
  EXPECT_FALSE(read.has_labels());
  expect_same_dataset(read, original);
}

TEST(DatasetIo, WriteReplacesAnExistingFileAndLeavesNoTemporary) {
  const TempDir dir;
  const std::string path = valid_file(dir, build_dataset(1));
  pdsp::write_dataset(path, build_dataset(3));
  EXPECT_EQ(pdsp::read_dataset(path).num_examples(), 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// ---- 2. Malformed files. ----

TEST(DatasetIo, MissingFileIsAnInputError) {
  const TempDir dir;
  expect_error_names(dir.file("absent.h5"), {"not found"});
}

TEST(DatasetIo, TextFileIsAnInputError) {
  const TempDir dir;
  const std::string path = dir.file("notes.h5");
  std::ofstream(path) << "var_offset,card\n0,2\n";
  expect_error_names(path, {"HDF5"});
}

TEST(DatasetIo, TruncatedFileIsAnInputError) {
  const TempDir dir;
  const std::string whole = valid_file(dir);
  const std::string path = dir.file("truncated.h5");
  const auto size = static_cast<std::streamsize>(fs::file_size(whole));
  std::vector<char> bytes(static_cast<size_t>(size));
  std::ifstream(whole, std::ios::binary).read(bytes.data(), size);
  std::ofstream(path, std::ios::binary).write(bytes.data(), size / 2);
  ASSERT_EQ(fs::file_size(path), static_cast<uintmax_t>(size / 2));
  expect_error_names(path, {});
}

TEST(DatasetIo, WrongFormatAttributeIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  write_string_attribute_raw(path, "format", "pdsp-model", false);
  expect_error_names(path, {"@format", "pdsp-model"});
}

TEST(DatasetIo, UnknownFormatVersionIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  write_int_attribute_raw(path, "format_version", H5T_STD_I64LE, 2);
  expect_error_names(path, {"@format_version", "version 2"});
}

TEST(DatasetIo, MissingNumParamsIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  delete_attribute_raw(path, "num_params");
  expect_error_names(path, {"@num_params"});
}

TEST(DatasetIo, NumParamsStoredAsAnArrayIsAnInputError) {
  // An array attribute must be refused, not read into a single value (it once overran it).
  const TempDir dir;
  const std::string path = valid_file(dir);
  const std::vector<int64_t> values = {kNumParams, 7, 8, 9};
  write_attribute_raw(path, "num_params", H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(), {4});
  expect_error_names(path, {"@num_params"});
}

TEST(DatasetIo, MissingVarsCardIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  delete_raw(path, "/vars/card");
  expect_error_names(path, {"/vars/card", "missing"});
}

TEST(DatasetIo, VarOffsetThatDoesNotIncreaseIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int64_t>(path, "/examples/var_offset", [](auto& v) { v.at(2) = v.at(1); });
  expect_error_names(path, {"/examples/var_offset[2]"});
}

TEST(DatasetIo, FactorOffsetNotEndingAtTheFactorCountIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  // Still non-decreasing, so only the end check can catch it.
  edit_raw<int64_t>(path, "/examples/factor_offset", [](auto& v) { v.at(3) = v.at(2); });
  expect_error_names(path, {"/examples/factor_offset[3]"});
}

TEST(DatasetIo, ZeroCardinalityIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int32_t>(path, "/vars/card", [](auto& v) { v.at(4) = 0; });
  expect_error_names(path, {"/vars/card[4]"});
}

TEST(DatasetIo, LabelEqualToCardinalityIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  const int32_t card = read_raw<int32_t>(path, "/vars/card").at(3);
  edit_raw<int32_t>(path, "/vars/label", [card](auto& v) { v.at(3) = card; });
  expect_error_names(path, {"/vars/label[3]"});
}

TEST(DatasetIo, FactorVariableFromAnotherExampleIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  // Slot 5 is the first variable of factor 2 (example 1); variable 1 lives in example 0.
  ASSERT_EQ(read_raw<int64_t>(path, "/factors/vars").at(5), 3);
  edit_raw<int64_t>(path, "/factors/vars", [](auto& v) { v.at(5) = 1; });
  expect_error_names(path, {"/factors/vars[5]"});
}

TEST(DatasetIo, FactorListingAVariableTwiceIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  // Slots 2..4 are the arity-3 factor {0, 1, 2}; make it {0, 1, 0}.
  ASSERT_EQ(read_raw<int64_t>(path, "/factors/vars").at(4), 2);
  edit_raw<int64_t>(path, "/factors/vars", [](auto& v) { v.at(4) = 0; });
  expect_error_names(path, {"/factors/vars[4]"});
}

TEST(DatasetIo, VarFeatureParamAtNumParamsIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int32_t>(path, "/vars/feat_param", [](auto& v) { v.at(2) = kNumParams; });
  expect_error_names(path, {"/vars/feat_param[2]"});
}

TEST(DatasetIo, NegativeFactorFeatureParamIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int32_t>(path, "/factors/feat_param", [](auto& v) { v.at(1) = -1; });
  expect_error_names(path, {"/factors/feat_param[1]"});
}

TEST(DatasetIo, NanVarFeatureValueIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<double>(path, "/vars/feat_value",
                   [](auto& v) { v.at(3) = std::numeric_limits<double>::quiet_NaN(); });
  expect_error_names(path, {"/vars/feat_value[3]"});
}

TEST(DatasetIo, InfiniteFactorFeatureValueIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<double>(path, "/factors/feat_value",
                   [](auto& v) { v.at(0) = -std::numeric_limits<double>::infinity(); });
  expect_error_names(path, {"/factors/feat_value[0]"});
}

TEST(DatasetIo, VarFeatPtrOfTheWrongLengthIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int64_t>(path, "/vars/feat_ptr", [](auto& v) { v.pop_back(); });
  expect_error_names(path, {"/vars/feat_ptr", "length"});
}

TEST(DatasetIo, DecreasingFactorFeatPtrIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  edit_raw<int64_t>(path, "/factors/feat_ptr", [](auto& v) { v.at(5) = v.at(6) + 1; });
  expect_error_names(path, {"/factors/feat_ptr[6]"});
}

TEST(DatasetIo, NanVarCountingIsAnInputError) {
  const TempDir dir;
  pdsp::Dataset data = build_dataset(3);
  add_optional_arrays(data);
  const std::string path = valid_file(dir, data);
  edit_raw<double>(path, "/vars/counting",
                   [](auto& v) { v.at(2) = std::numeric_limits<double>::quiet_NaN(); });
  expect_error_names(path, {"/vars/counting[2]"});
}

TEST(DatasetIo, VarLossOfTheWrongLengthIsAnInputError) {
  const TempDir dir;
  pdsp::Dataset data = build_dataset(3);
  add_optional_arrays(data);
  const std::string path = valid_file(dir, data);
  edit_raw<double>(path, "/vars/loss", [](auto& v) { v.pop_back(); });
  expect_error_names(path, {"/vars/loss", "length"});
}

TEST(DatasetIo, IntegerDatasetStoredAsFloatIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  const std::vector<int32_t> card = read_raw<int32_t>(path, "/vars/card");
  replace_raw(path, "/vars/card", std::vector<double>(card.begin(), card.end()), H5T_IEEE_F64LE);
  expect_error_names(path, {"/vars/card", "integer"});
}

TEST(DatasetIo, TwoDimensionalDatasetIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  const std::vector<int32_t> label = read_raw<int32_t>(path, "/vars/label");
  replace_raw(path, "/vars/label", label, H5T_STD_I32LE, {label.size(), 1});
  expect_error_names(path, {"/vars/label", "1-D"});
}

// ---- 3. Tolerances the format promises (h5py and other writers). ----

TEST(DatasetIo, VariableLengthFormatAndNarrowIntegerAttributesAreAccepted) {
  const TempDir dir;
  const pdsp::Dataset original = build_dataset(3);
  const std::string path = valid_file(dir, original);
  write_string_attribute_raw(path, "format", pdsp::kDatasetFormat, true);
  write_int_attribute_raw(path, "format_version", H5T_STD_I8LE, pdsp::kDatasetFormatVersion);
  write_int_attribute_raw(path, "num_params", H5T_STD_I32LE, kNumParams);
  expect_same_dataset(pdsp::read_dataset(path), original);
}

TEST(DatasetIo, NullTerminatedFixedLengthFormatIsAccepted) {
  const TempDir dir;
  const pdsp::Dataset original = build_dataset(3);
  const std::string path = valid_file(dir, original);
  write_string_attribute_raw(path, "format", pdsp::kDatasetFormat, false);
  write_int_attribute_raw(path, "num_params", H5T_STD_U16BE, kNumParams);
  expect_same_dataset(pdsp::read_dataset(path), original);
}

TEST(DatasetIo, Int32OffsetsAndIdsAreAccepted) {
  const TempDir dir;
  const pdsp::Dataset original = build_dataset(3);
  const std::string path = valid_file(dir, original);
  for (const char* name : {"/examples/var_offset", "/examples/factor_offset", "/vars/feat_ptr",
                           "/factors/var_ptr", "/factors/feat_ptr"}) {
    const std::vector<int64_t> wide = read_raw<int64_t>(path, name);
    replace_raw(path, name, std::vector<int32_t>(wide.begin(), wide.end()), H5T_STD_I32LE);
  }
  // Another byte order as well: the reader must let HDF5 convert, not copy bytes.
  const std::vector<int64_t> vars = read_raw<int64_t>(path, "/factors/vars");
  replace_raw(path, "/factors/vars", std::vector<int32_t>(vars.begin(), vars.end()), H5T_STD_I32BE);
  expect_same_dataset(pdsp::read_dataset(path), original);
}

// ---- 4. Slices. ----

TEST(DatasetIo, ScanDescribesTheWholeFile) {
  const TempDir dir;
  pdsp::Dataset original = build_dataset(4);
  add_optional_arrays(original);
  const std::string path = valid_file(dir, original);
  pdsp::SerialCommunicator serial;
  const pdsp::DatasetLayout layout = pdsp::scan_dataset(path, serial);
  EXPECT_EQ(layout.num_params, kNumParams);
  EXPECT_EQ(layout.var_offset, original.var_offset);
  EXPECT_EQ(layout.factor_offset, original.factor_offset);
  std::vector<int64_t> states, tables, slots;
  for (int64_t n = 0; n <= original.num_examples(); ++n) {
    states.push_back(original.state_offset[original.var_offset[n]]);
    tables.push_back(original.table_offset[original.factor_offset[n]]);
    slots.push_back(original.factor_var_ptr[original.factor_offset[n]]);
  }
  EXPECT_EQ(layout.state_offset, states);
  EXPECT_EQ(layout.table_offset, tables);
  EXPECT_EQ(layout.slot_offset, slots);
  EXPECT_TRUE(layout.has_labels);
  EXPECT_TRUE(layout.has_var_counting);
  EXPECT_TRUE(layout.has_factor_counting);
  EXPECT_TRUE(layout.has_loss);
  ASSERT_EQ(layout.cost.size(), 4u);
  for (double cost : layout.cost) EXPECT_GT(cost, 0.0);
}

TEST(DatasetIo, SliceOfExamplesMatchesThatPartOfTheWholeFile) {
  const TempDir dir;
  pdsp::Dataset original = build_dataset(4);
  add_optional_arrays(original);
  const std::string path = valid_file(dir, original);
  pdsp::SerialCommunicator serial;
  const pdsp::DatasetLayout layout = pdsp::scan_dataset(path, serial);
  ASSERT_EQ(layout.num_examples(), 4);
  const pdsp::Dataset whole = pdsp::read_examples(layout, 0, 4);
  expect_same_dataset(whole, original);

  const pdsp::Dataset slice = pdsp::read_examples(layout, 1, 3);
  // Non-zero starts everywhere, or the rebasing would go untested.
  ASSERT_GT(slice.first_var, 0);
  ASSERT_GT(slice.first_factor, 0);
  ASSERT_GT(slice.first_state, 0);
  ASSERT_GT(slice.first_table_entry, 0);
  ASSERT_GT(slice.var_features.nnz(), 0);
  ASSERT_GT(slice.factor_features.nnz(), 0);
  expect_same_dataset(slice, expected_slice(whole, 1, 3));
  EXPECT_EQ(slice.first_var, 3);
  EXPECT_EQ(slice.first_factor, 2);
  EXPECT_EQ(slice.first_state, 2 + 3 + 4);
  EXPECT_EQ(slice.first_table_entry, 6 + 24);
}

TEST(DatasetIo, SingleExampleSlicesReassembleTheFile) {
  const TempDir dir;
  const pdsp::Dataset original = build_dataset(4);
  const std::string path = valid_file(dir, original);
  pdsp::SerialCommunicator serial;
  const pdsp::DatasetLayout layout = pdsp::scan_dataset(path, serial);
  for (int64_t n = 0; n < 4; ++n) {
    SCOPED_TRACE("example " + std::to_string(n));
    expect_same_dataset(pdsp::read_examples(layout, n, n + 1), expected_slice(original, n, n + 1));
  }
}

// ---- 5. Model files and overwrite protection. ----

TEST(DatasetIo, ModelRoundTripPreservesThetaAndHyperParameters) {
  const TempDir dir;
  const std::string path = dir.file("model.h5");
  const std::vector<double> theta = {1.0 / 3.0, -0.0, 2.5e-310, -7.25, 1e300};
  pdsp::write_model(path, theta,
                    {{"epsilon", "0.25"}, {"counting", "bethe"}, {"max_iterations", "50"}});
  const pdsp::ModelFile model = pdsp::read_model(path);
  EXPECT_EQ(bits(model.theta), bits(theta));
  EXPECT_EQ(model.epsilon, 0.25);
  EXPECT_EQ(model.counting, "bethe");
  // Numeric text becomes a number, so that other tools read it without parsing.
  const pdsp::h5::File file = pdsp::h5::File::open_read(path);
  EXPECT_EQ(file.read_double_attribute("max_iterations"), 50.0);
  EXPECT_EQ(file.read_string_attribute("format"), pdsp::kModelFormat);
}

TEST(DatasetIo, ReadingADatasetAsAModelIsAnInputError) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  try {
    (void)pdsp::read_model(path);
    ADD_FAILURE() << "read_model accepted a dataset file";
  } catch (const pdsp::InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("@format"), std::string::npos) << message;
  }
}

TEST(DatasetIo, OverwritingTheInputIsRefused) {
  const TempDir dir;
  const std::string input = valid_file(dir);
  EXPECT_THROW(pdsp::refuse_to_overwrite_input(input, input), pdsp::InputError);
  // Another spelling of the same file is still the same file.
  const std::string respelled = (dir.path() / "." / "data.h5").string();
  EXPECT_THROW(pdsp::refuse_to_overwrite_input(respelled, input), pdsp::InputError);
  try {
    pdsp::refuse_to_overwrite_input(input, input);
  } catch (const pdsp::InputError& error) {
    EXPECT_NE(std::string(error.what()).find(input), std::string::npos) << error.what();
  }
}

TEST(DatasetIo, WritingBesideTheInputIsAllowed) {
  const TempDir dir;
  const std::string input = valid_file(dir);
  EXPECT_NO_THROW(pdsp::refuse_to_overwrite_input(dir.file("model.h5"), input));
  pdsp::write_model(dir.file("model.h5"), {1.0}, {{"epsilon", "1"}, {"counting", "uniform"}});
  EXPECT_NO_THROW(pdsp::refuse_to_overwrite_input(dir.file("model.h5"), input));
}

}  // namespace

namespace {

TEST(DatasetIo, FixedLengthUtf8FormatIsAccepted) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  const Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  const std::string text = "pdsp-dataset";
  H5Tset_size(type.get(), text.size());
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  write_attribute_raw(path, "format", type.get(), type.get(), text.c_str());
  EXPECT_NO_THROW(pdsp::read_dataset(path));
}

TEST(DatasetIo, A64BitCardinalityBeyond32BitsIsNamedNotClamped) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  const std::vector<int32_t> narrow = read_raw<int32_t>(path, "/vars/card");
  std::vector<int64_t> card(narrow.begin(), narrow.end());
  card.at(2) = (int64_t{1} << 32) + 2;
  replace_raw(path, "/vars/card", card, H5T_STD_I64LE);
  expect_error_names(path, {"/vars/card[2]", "does not fit in 32 bits"});
}

TEST(DatasetIo, VarCountingWithoutFactorCountingIsAnInputError) {
  const TempDir dir;
  pdsp::Dataset data = build_dataset(3);
  add_optional_arrays(data);
  const std::string path = valid_file(dir, data);
  delete_raw(path, "/factors/counting");
  expect_error_names(path, {"/factors/counting", "is missing"});
}

}  // namespace
