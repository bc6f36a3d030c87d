// Training on the parameters a training set reads (parameter_compaction.hpp): the compact set's
// potentials and moments are the full set's at the expanded theta, training follows the full
// layout's trajectory, and layouts whose blocks cannot shrink on their own stay whole.
#include "pdsp/data/parameter_compaction.hpp"

#include <gtest/gtest.h>

#include <set>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/compact_checks.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;
using testing::positions;
using testing::random_vector;

// Counted from the rows directly: the wide type's positions some region reads, or that a dim 2
// factor row reads (positions are one numbering for all types).
int64_t read_wide_positions(const Dataset& data) {
  std::set<int32_t> read;
  for (const RegionTypes* kind : {&data.var_types, &data.factor_types})
    for (size_t r = 0; r < kind->type.size(); ++r)
      if (kind->type[r] >= 0 && kind->dim[kind->type[r]] > 0)
        for (int64_t e = data.observations.ptr[kind->obs_row[r]];
             e < data.observations.ptr[kind->obs_row[r] + 1]; ++e)
          read.insert(data.observations.index[e]);
  return static_cast<int64_t>(read.size());
}

ParameterCompaction plan_serially(const Dataset& data) {
  SerialCommunicator serial;
  return ParameterCompaction::of_training_set(data, serial);
}

TEST(ParameterCompaction, DropsTheWidePositionsNoRegionReads) {
  const Dataset full = testing::wide_sparse_chains(30, 1);
  const ParameterCompaction plan = plan_serially(full);
  ASSERT_TRUE(plan.active());
  const int64_t read = read_wide_positions(full);
  ASSERT_LT(read, testing::kWideDim);
  EXPECT_EQ(plan.full_params(), full.num_params);
  EXPECT_EQ(plan.compact_params(), full.num_params - 3 * (testing::kWideDim - read));
  Dataset compact = full;
  plan.apply(compact);
  EXPECT_EQ(compact.num_params, plan.compact_params());
  EXPECT_EQ(compact.var_types.dim[0], read);
  EXPECT_EQ(compact.var_types.param_offset[0], testing::kWideOffset);
  EXPECT_EQ(compact.factor_types.dim, (std::vector<int32_t>{0, 2}));
}

TEST(ParameterCompaction, PotentialsAndMomentsAreTheFullLayoutsAtTheExpandedTheta) {
  const Dataset full = testing::wide_sparse_chains(30, 2);
  const ParameterCompaction plan = plan_serially(full);
  Dataset compact = full;
  plan.apply(compact);
  const std::vector<double> theta = random_vector(compact.num_params, 3);
  const std::vector<double> loss = random_vector(full.num_states(), 4);
  std::vector<double> expected(static_cast<size_t>(positions(full)));
  FeatureIndex(full).potentials(plan.expand(theta), loss, expected);
  std::vector<double> actual(expected.size());
  FeatureIndex(compact).potentials(theta, loss, actual);
  EXPECT_LT(max_abs_difference(actual, expected), 1e-12);

  // Moments: the full layout's are zero where nothing reads, and the compact ones elsewhere.
  const std::vector<double> weight = random_vector(positions(full), 5);
  std::vector<double> z_full(static_cast<size_t>(full.num_params));
  FeatureIndex(full).moments(weight, z_full);
  std::vector<double> z_compact(static_cast<size_t>(compact.num_params));
  FeatureIndex(compact).moments(weight, z_compact);
  EXPECT_LT(max_abs_difference(plan.expand(z_compact), z_full), 1e-12);
}

TEST(ParameterCompaction, TrainingFollowsTheFullLayoutsTrajectory) {
  const Dataset full = testing::wide_sparse_chains(24, 6);
  const ParameterCompaction plan = plan_serially(full);
  Dataset compact = full;
  plan.apply(compact);
  TrainConfig config;
  config.counting = CountingMode::Bethe;
  config.max_iters = 15;
  config.tol = 0;
  std::vector<std::vector<double>> theta;
  for (const Dataset* data : {&full, static_cast<const Dataset*>(&compact)}) {
    LocalProblem problem(*data, {1.0, CountingMode::Bethe, 1.0, true, "wide chains"});
    SerialCommunicator serial;
    testing::Recorder recorder;
    theta.push_back(train(problem, config, serial, recorder).state.theta);
  }
  const std::vector<double> expanded = plan.expand(theta[1]);
  EXPECT_LT(max_abs_difference(expanded, theta[0]), 1e-9);
  // What the compact run never held stayed zero in the full one.
  for (size_t i = 0; i < expanded.size(); ++i)
    if (expanded[i] == 0) {
      EXPECT_EQ(theta[0][i], 0) << "parameter " << i;
    }
}

TEST(ParameterCompaction, LayoutsWhoseBlocksCannotShrinkAloneStayWhole) {
  const Dataset wide = testing::wide_sparse_chains(12, 7);
  Dataset shared_table_inside = wide;  // the per-state table on the wide block's positions
  shared_table_inside.var_types.param_offset[1] = testing::kWideOffset + 1;
  Dataset overlapping = wide;  // the dim 2 factor type on the wide block's positions
  overlapping.factor_types.param_offset[1] = testing::kWideOffset;
  Dataset row_inside = wide;  // a format 1 row reading a wide position
  ASSERT_GT(row_inside.var_features.nnz(), 0);
  row_inside.var_features.param[0] = static_cast<int32_t>(testing::kWideOffset + 2);
  Dataset all_read = wide;  // the wide type narrowed to what its rows read
  all_read.var_types.dim[0] = 2;
  for (int32_t& j : all_read.observations.index) j %= 2;
  for (const Dataset* data : {&shared_table_inside, &overlapping, &row_inside, &all_read}) {
    const ParameterCompaction plan = plan_serially(*data);
    EXPECT_FALSE(plan.active());
    Dataset applied = *data;
    plan.apply(applied);
    EXPECT_EQ(applied.observations.index, data->observations.index);
    EXPECT_EQ(applied.num_params, data->num_params);
    const std::vector<double> theta = random_vector(data->num_params, 8);
    EXPECT_EQ(plan.expand(theta), theta);
  }
}

}  // namespace
}  // namespace pdsp
