// One InputError per kind of damage to a pdsp-dataset file, naming the file, the dataset and
// the index (design.md section 7).
#include <gtest/gtest.h>
#include <hdf5.h>

#include "support/dataset_files.hpp"

namespace {

using namespace pdsp::testing::files;

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
  write_int_attribute_raw(path, "format_version", H5T_STD_I64LE, 3);
  expect_error_names(path, {"@format_version", "version 3"});
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

// A chunked dataset whose chunks were never written claims any length in a few bytes of file:
// reading it must not allocate and fill 128 MiB (or, with a larger claim, more than memory).
TEST(DatasetIo, DatasetWhoseChunksWereNeverWrittenIsAnInputErrorBeforeALargeRead) {
  const TempDir dir;
  const std::string path = valid_file(dir);
  delete_raw(path, "/examples/var_offset");
  {
    const Handle file = open_raw(path, H5F_ACC_RDWR);
    const hsize_t length = hsize_t{1} << 24, chunk = 1024;
    const Handle space(H5Screate_simple(1, &length, nullptr), H5Sclose);
    const Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(properties.get(), 1, &chunk);
    const Handle dataset(H5Dcreate2(file.get(), "/examples/var_offset", H5T_STD_I64LE, space.get(),
                                    H5P_DEFAULT, properties.get(), H5P_DEFAULT),
                         H5Dclose);
    require(dataset.get() >= 0, "create a sparse /examples/var_offset");
  }
  expect_error_names(path, {"/examples/var_offset: some of its chunks were never written"});
}

}  // namespace
