// Reading and writing the pdsp-dataset HDF5 format (design.md section 7): exact round trips,
// the tolerances the format promises, slices, model files.
#include <gtest/gtest.h>
#include <hdf5.h>

#include "pdsp/data/output_checks.hpp"
#include "support/dataset_files.hpp"

namespace {

using namespace pdsp::testing::files;

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
  pdsp::Provenance provenance;
  provenance.version = "9.8.7";
  provenance.commit = "abc123-dirty";
  provenance.command_line = "pdsp train --data 'a b.h5'";
  provenance.hosts = {"node1", "node2"};
  provenance.ranks = 4;
  provenance.threads = 8;
  provenance.started_at = "2026-11-23T10:00:00Z";
  provenance.data_fingerprint = "examples=4 sum=0123";
  provenance.config = "epsilon=0.25\ncounting=\"bethe\"\n";
  pdsp::write_model(path, theta,
                    {{"epsilon", 0.25}, {"counting", "bethe"}, {"max_iterations", int64_t{50}}},
                    provenance);
  const pdsp::ModelFile model = pdsp::read_model(path);
  EXPECT_EQ(bits(model.theta), bits(theta));
  EXPECT_EQ(model.epsilon, 0.25);
  EXPECT_EQ(model.counting, "bethe");
  EXPECT_EQ(model.provenance.fields(), provenance.fields());
  // Attributes keep their types, so that other tools read them without parsing.
  const pdsp::h5::File file = pdsp::h5::File::open_read(path);
  EXPECT_EQ(file.read_int_attribute("max_iterations"), 50);
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
  EXPECT_THROW(pdsp::check_outputs({{"--out", input}}, {{"--data", input}}), pdsp::InputError);
  // Another spelling of the same file is still the same file.
  const std::string respelled = (dir.path() / "." / "data.h5").string();
  EXPECT_THROW(pdsp::check_outputs({{"--out", respelled}}, {{"--data", input}}), pdsp::InputError);
  try {
    pdsp::check_outputs({{"--out", input}}, {{"--data", input}});
  } catch (const pdsp::InputError& error) {
    EXPECT_NE(std::string(error.what()).find(input), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("--data"), std::string::npos) << error.what();
  }
}

TEST(DatasetIo, WritingBesideTheInputIsAllowed) {
  const TempDir dir;
  const std::string input = valid_file(dir);
  EXPECT_NO_THROW(pdsp::check_outputs({{"--out", dir.file("model.h5")}}, {{"--data", input}}));
  pdsp::write_model(dir.file("model.h5"), {1.0}, {{"epsilon", 1.0}, {"counting", "uniform"}}, {});
  EXPECT_NO_THROW(pdsp::check_outputs({{"--out", dir.file("model.h5")}}, {{"--data", input}}));
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

TEST(LocalIndex, ValuesBeyond32BitsAreAnErrorThatNamesTheSource) {
  EXPECT_EQ(pdsp::to_local_index(int64_t{2147483647}, "slots", "f.h5"), 2147483647);
  try {
    pdsp::to_local_index(int64_t{1} << 31, "factor table entries", "f.h5");
    FAIL() << "no error";
  } catch (const pdsp::InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("f.h5: factor table entries reaches 2147483648"), std::string::npos);
    EXPECT_NE(message.find("more ranks"), std::string::npos);
  }
  EXPECT_THROW(pdsp::to_local_index(-1, "slots", "f.h5"), pdsp::InputError);
}
