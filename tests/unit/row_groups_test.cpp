// Row groups (consecutive regions reading one observation row, summed side by side): which runs
// form groups, and yeast-like labels whose potentials and moments through the groups equal the
// expansion to format 1 rows, including moment blocks that start inside a group.
#include "pdsp/features/row_groups.hpp"

#include <gtest/gtest.h>

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/features/feature_index.hpp"
#include "support/compact_checks.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

TEST(RowGroups, RunsOfOneRowWithDistinctTypesOfOneDimension) {
  RegionTypes types;
  types.present = true;
  types.param_offset = {0, 10, 20, 30};
  types.dim = {5, 5, 5, 3};
  //            0  1  2   3  4  5  6  7  8  9
  types.type = {0, 1, 2, -1, 0, 1, 1, 2, 3, 0};
  types.obs_row = {0, 0, 0, -1, 1, 1, 1, 1, 1, 2};
  const auto size = [](int64_t r) { return r == 5 ? 3 : 2; };
  const RowGroups groups =
      find_row_groups(types, 10, size, [&](int64_t r) { return types.type[r] >= 0; });
  // [0, 3), none, [4, 6) (type 1 twice), [6, 8) (type 3 has another dimension), 8 and 9 alone.
  const std::vector<int32_t> pattern = {0, 0, 0, -1, 1, 1, 2, 2, -1, -1};
  const std::vector<int32_t> member = {0, 1, 2, 0, 0, 1, 0, 1, 0, 0};
  EXPECT_EQ(groups.pattern, pattern);
  EXPECT_EQ(groups.member, member);
  ASSERT_EQ(groups.patterns.size(), 3u);
  EXPECT_EQ(groups.patterns[1].types, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(groups.patterns[1].column, (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(groups.patterns[2].width(), 4);

  types.obs_row = {0, 1, 2, -1, 3, 4, 5, 6, 7, 8};  // no two regions share a row
  EXPECT_TRUE(find_row_groups(types, 10, size, [&](int64_t r) {
                return types.type[r] >= 0;
              }).pattern.empty());
}

using testing::random_vector;

TEST(RowGroups, LabelsSharingRowsGiveThePotentialsAndMomentsOfTheExpansion) {
  // Enough typed work for several moment blocks, whose boundaries fall inside groups.
  const Dataset data = testing::multi_label_dataset(3000);
  const Dataset rows = testing::expand_to_rows(data);
  const int64_t positions = data.num_states() + data.num_table_entries();
  const std::vector<double> theta = random_vector(data.num_params, 3);
  const std::vector<double> loss = random_vector(data.num_states(), 4);
  std::vector<double> expected(static_cast<size_t>(positions));
  compute_potentials(rows, theta, loss, expected);
  std::vector<double> actual(expected.size());
  FeatureIndex(data).potentials(theta, loss, actual);
  EXPECT_LT(testing::max_abs_difference(actual, expected), 1e-12);

  const std::vector<double> weight = random_vector(positions, 5);
  testing::expect_moments_of_expansion(data, rows, weight, 1e-9);
}

}  // namespace
}  // namespace pdsp
