// Row groups (consecutive regions reading one observation row, summed side by side): which runs
// form groups, and yeast-like labels whose potentials and moments through the groups equal the
// expansion to format 1 rows, including moment blocks that start inside a group.
#include "pdsp/learning/row_groups.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/learning/feature_index.hpp"
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

// Multi-label examples as the converter writes them: each label a binary variable of its own
// type reading the instance's dense row, a shared 2 x 2 table per label pair. Label 2 has no type
// in every third example, which splits the run there.
Dataset labels_sharing_rows(int examples) {
  constexpr int32_t kLabels = 5, kDim = 7;
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int32_t pairs = kLabels * (kLabels - 1) / 2;
  DatasetBuilder builder(kLabels * 2 * kDim + 4 * pairs);
  ObservationRows obs;
  std::vector<int64_t> obs_offset = {0};
  std::vector<int32_t> var_type, factor_type;
  std::vector<LocalIndex> var_row;
  for (int n = 0; n < examples; ++n) {
    builder.begin_example();
    const auto row = static_cast<LocalIndex>(obs.num_rows());
    for (int32_t j = 0; j < kDim; ++j)
      if (rng() % 5 != 0) {
        obs.index.push_back(j);
        obs.value.push_back(normal(rng));
      }
    obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
    std::vector<int64_t> ids;
    for (int32_t l = 0; l < kLabels; ++l) {
      ids.push_back(builder.add_variable(2, static_cast<int32_t>(rng() % 2)));
      const bool typed = l != 2 || n % 3 != 0;
      var_type.push_back(typed ? l : -1);
      var_row.push_back(typed ? row : -1);
    }
    for (int32_t i = 0, p = 0; i < kLabels; ++i)
      for (int32_t j = i + 1; j < kLabels; ++j, ++p) {
        builder.add_factor({ids[i], ids[j]});
        factor_type.push_back(p);
      }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = obs_offset;
  data.observations = obs;
  std::vector<int64_t> label_offset, pair_offset;
  for (int32_t l = 0; l < kLabels; ++l) label_offset.push_back(l * 2 * kDim);
  for (int32_t p = 0; p < pairs; ++p) pair_offset.push_back(kLabels * 2 * kDim + 4 * p);
  data.var_types = {true, label_offset, std::vector<int32_t>(kLabels, kDim), var_type, var_row};
  data.factor_types = {true, pair_offset, std::vector<int32_t>(pairs, 0), factor_type, {}};
  return data;
}

std::vector<double> random_vector(int64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(static_cast<size_t>(size));
  for (double& v : x) v = normal(rng);
  return x;
}

TEST(RowGroups, LabelsSharingRowsGiveThePotentialsAndMomentsOfTheExpansion) {
  // Enough typed work for several moment blocks, whose boundaries fall inside groups.
  const Dataset data = labels_sharing_rows(3000);
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
  std::vector<double> z_expected(static_cast<size_t>(data.num_params));
  FeatureIndex(rows, FeatureIndex::Order::ByRows).moments(weight, z_expected);
  std::vector<std::vector<double>> z(2, std::vector<double>(z_expected.size()));
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    FeatureIndex(data).moments(weight, z[threads - 1]);
  }
  omp_set_num_threads(1);
  EXPECT_LT(testing::max_abs_difference(z[0], z_expected), 1e-9);
  EXPECT_EQ(z[0], z[1]) << "moments depend on the thread count";
}

}  // namespace
}  // namespace pdsp
