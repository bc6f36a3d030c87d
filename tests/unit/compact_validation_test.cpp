// One InputError per kind of damage to format 2's compact part, naming the file, the dataset and
// the index (docs/file-format.md, format 2).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>

#include "pdsp/data/reader_checks.hpp"
#include "support/compact_data.hpp"
#include "support/dataset_files.hpp"

namespace {

using namespace pdsp::testing::files;

// Three examples of the loopy shape; the first variable that reads an observation row, and the
// first that has no type, are found in the data.
class CompactFile : public ::testing::Test {
 protected:
  CompactFile()
      : data_(pdsp::testing::random_compact_dataset(
            std::vector<pdsp::testing::GraphShape>(3, pdsp::testing::loopy_shape()), 9)),
        path_(valid_file(dir_, data_)) {}

  // The first variable of type 0 (which reads an observation row of dim 3), in example `n`.
  int64_t reading_variable(int64_t n) const {
    for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v)
      if (data_.var_types.type[v] == 0) return v;
    ADD_FAILURE() << "no variable of type 0 in example " << n;
    return 0;
  }

  TempDir dir_;
  pdsp::Dataset data_;
  std::string path_;
};

TEST_F(CompactFile, IsValidAsWritten) {
  EXPECT_NO_THROW((void)pdsp::read_dataset(path_));
}

TEST_F(CompactFile, ATypeOutOfRangeIsNamed) {
  const int64_t v = reading_variable(1);
  edit_raw<int32_t>(path_, "/vars/type", [&](auto& t) { t[v] = 2; });
  expect_error_names(path_, {"/vars/type[" + std::to_string(v) + "]", "outside [-1, 2)"});
}

TEST_F(CompactFile, ANegativeParameterOffsetIsNamed) {
  edit_raw<int64_t>(path_, "/factor_types/param_offset", [](auto& o) { o[1] = -4; });
  expect_error_names(path_, {"/factor_types/param_offset[1]", ">= 0"});
}

TEST_F(CompactFile, ABlockPastNumParamsIsNamed) {
  const int64_t v = reading_variable(0);
  edit_raw<int64_t>(path_, "/var_types/param_offset",
                    [&](auto& o) { o[0] = data_.num_params - 4; });
  expect_error_names(path_, {"/vars/type[" + std::to_string(v) + "]", "@num_params"});
}

// Offsets near 2^63 (issue 37, part 7's fuzz finds and neighbours): offset + states * dim wraps
// past INT64_MAX and looked small, so `info` passed such a file and `train` died allocating. Each
// is refused at the scan with one line naming the type's entry.
TEST_F(CompactFile, ParameterOffsetsNearTwoToThe63AreRefusedInOneLine) {
  const std::string params = std::to_string(data_.num_params);
  struct Case {
    const char* name;  // the dataset edited, at `index`
    int64_t index, offset;
    int64_t width;  // max(dim, 1) of that type: 3 and 1 for the variable types, 1 and 2 for
                    // the factor types (random_compact_dataset)
  };
  const Case cases[] = {
      {"/factor_types/param_offset", 0, INT64_MAX, 1},      // the report's factor type
      {"/var_types/param_offset", 0, INT64_MAX - 7, 3},     // the report's variable type
      {"/factor_types/param_offset", 1, INT64_MAX - 1, 2},  // + 2 states * 2 wraps
      {"/var_types/param_offset", 1, int64_t{1} << 62, 1},
      {"/var_types/param_offset", 0, INT64_MAX - data_.num_params, 3},
      {"/factor_types/param_offset", 1, data_.num_params - 1, 2},  // just past, no overflow
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " = " + std::to_string(c.offset));
    const std::string path = valid_file(dir_, data_);
    edit_raw<int64_t>(path, c.name, [&](auto& o) { o[c.index] = c.offset; });
    EXPECT_EQ(read_error(path), path + ": " + c.name + "[" + std::to_string(c.index) + "]: is " +
                                    std::to_string(c.offset) + ": a block of one state, " +
                                    std::to_string(c.width) +
                                    (c.width == 1 ? " parameter" : " parameters") +
                                    " wide, would end past @num_params = " + params);
  }
}

TEST_F(CompactFile, ADimensionLargerThanNumParamsIsRefusedInOneLine) {
  edit_raw<int32_t>(path_, "/var_types/dim", [](auto& d) { d[0] = INT32_MAX; });
  EXPECT_EQ(read_error(path_), path_ +
                                   ": /var_types/dim[0]: is 2147483647: one state's block is "
                                   "larger than @num_params = " +
                                   std::to_string(data_.num_params));
}

TEST(BlockFits, DecidesWithoutOverflow) {
  EXPECT_TRUE(pdsp::block_fits(0, 4, 6, 24));
  EXPECT_TRUE(pdsp::block_fits(20, 2, 2, 24));
  EXPECT_FALSE(pdsp::block_fits(21, 2, 2, 24));
  EXPECT_TRUE(pdsp::block_fits(24, 0, 5, 24));
  EXPECT_TRUE(pdsp::block_fits(3, 1 << 20, 0, 24));
  EXPECT_FALSE(pdsp::block_fits(INT64_MAX, 1, 1, 24));
  EXPECT_FALSE(pdsp::block_fits(INT64_MAX - 7, 3, 4, 24));
  EXPECT_FALSE(pdsp::block_fits(0, INT64_MAX, 2, INT64_MAX));
  EXPECT_TRUE(pdsp::block_fits(1, INT64_MAX - 1, 1, INT64_MAX));
}

TEST_F(CompactFile, ANegativeDimensionIsNamed) {
  edit_raw<int32_t>(path_, "/var_types/dim", [](auto& d) { d[1] = -1; });
  expect_error_names(path_, {"/var_types/dim[1]", ">= 0"});
}

TEST_F(CompactFile, AnObservationRowOfAnotherExampleIsNamed) {
  const int64_t v = reading_variable(1);
  edit_raw<int64_t>(path_, "/vars/obs_row", [&](auto& r) { r[v] = 0; });
  expect_error_names(path_, {"/vars/obs_row[" + std::to_string(v) + "]", "example's rows"});
}

TEST_F(CompactFile, AnObservationPositionPastTheTypesDimensionIsNamed) {
  const int64_t v = reading_variable(0);
  const int64_t row = data_.var_types.obs_row[v];
  const int64_t entry = data_.observations.ptr[row];
  ASSERT_LT(entry, data_.observations.ptr[row + 1]) << "the row read by variable " << v;
  edit_raw<int32_t>(path_, "/obs/index", [&](auto& j) { j[entry] = 3; });
  expect_error_names(path_,
                     {"/obs/index[" + std::to_string(entry) + "]", "outside [0, 3) of type 0"});
}

TEST_F(CompactFile, ANegativeObservationPositionIsNamed) {
  edit_raw<int32_t>(path_, "/obs/index", [](auto& j) { j[2] = -1; });
  expect_error_names(path_, {"/obs/index[2]", "negative"});
}

TEST_F(CompactFile, ANonFiniteObservationIsNamed) {
  edit_raw<double>(path_, "/obs/value", [](auto& x) { x[1] = NAN; });
  expect_error_names(path_, {"/obs/value[1]", "not finite"});
}

TEST_F(CompactFile, DecreasingObservationPointersAreNamed) {
  edit_raw<int64_t>(path_, "/obs/ptr", [](auto& p) { p[2] = p[1] - 1; });
  expect_error_names(path_, {"/obs/ptr[2]", "must not decrease"});
}

TEST_F(CompactFile, ObservationOffsetsOfTheWrongLengthAreNamed) {
  edit_raw<int64_t>(path_, "/examples/obs_offset", [](auto& o) { o.pop_back(); });
  expect_error_names(path_, {"/examples/obs_offset", "expected 4"});
}

TEST_F(CompactFile, AMissingPartOfATypeGroupIsNamed) {
  delete_raw(path_, "/var_types/dim");
  expect_error_names(path_, {"/var_types/dim", "is missing"});
}

TEST_F(CompactFile, MissingObservationRowsOfATypeThatReadsThemAreNamed) {
  delete_raw(path_, "/factors/obs_row");
  expect_error_names(path_, {"/factors/obs_row", "is missing"});
}

TEST_F(CompactFile, CompactPartsInAFormat1FileAreRefused) {
  write_int_attribute_raw(path_, "format_version", H5T_STD_I64LE, 1);
  expect_error_names(path_, {"/vars/type", "format_version 2"});
}

TEST_F(CompactFile, FeatureEntriesWithoutRowPointersAreRefused) {
  delete_raw(path_, "/vars/feat_ptr");
  expect_error_names(path_, {"/vars/feat_ptr", "is missing, but /vars/feat_param"});
}

TEST_F(CompactFile, LeavingOutAllFeatureRowsIsValid) {
  for (const char* name : {"/vars/feat_ptr", "/vars/feat_param", "/vars/feat_value"})
    delete_raw(path_, name);
  const pdsp::Dataset back = pdsp::read_dataset(path_);
  EXPECT_EQ(back.var_features.nnz(), 0);
  EXPECT_EQ(back.var_features.num_rows(), back.num_states());
}

}  // namespace
