// LocalProblem::keep_truth_moments, for problems scored at many theta (the psi fit, a validation
// set): with a linear model, the ground-truth score and moments from the kept d are bitwise the
// ones the ground-truth indicator gives, at every theta and with a potential offset, also where
// shared tables leave factors' own tables unwritten.
#include <gtest/gtest.h>

#include <vector>

#include "pdsp/learning/local_problem.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

void expect_kept_moments_score_as_the_indicator(const Dataset& data) {
  const ProblemSettings settings = testing::training_settings(1.0, CountingMode::Bethe);
  LocalProblem indicator(data, settings), kept(data, settings);
  kept.keep_truth_moments();
  const std::vector<double> offset = testing::normal_theta(data.num_states(), 0.7, 5);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, seed);
    for (LocalProblem* problem : {&indicator, &kept}) {
      problem->set_potential_offset(seed == 3 ? offset : std::vector<double>());
      problem->set_theta(theta);
    }
    EXPECT_EQ(kept.ground_truth_score(), indicator.ground_truth_score()) << "seed " << seed;
    std::vector<double> expected(static_cast<size_t>(data.num_params)), actual(expected.size());
    indicator.ground_truth_moments(expected);
    kept.ground_truth_moments(actual);
    EXPECT_EQ(actual, expected) << "seed " << seed;
    EXPECT_NE(kept.ground_truth_score(), 0.0);
  }
}

TEST(KeptTruthMoments, ScoreTheGroundTruthAsTheIndicatorDoes) {
  expect_kept_moments_score_as_the_indicator(testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(4, 3), testing::loopy_shape()}, 6, 9));
}

TEST(KeptTruthMoments, ScoreTheGroundTruthAsTheIndicatorDoesWithSharedTables) {
  expect_kept_moments_score_as_the_indicator(testing::shared_table_dataset(
      {testing::chain_shape(5), testing::tree_shape(), testing::chain_shape(4)}, 2));
}

}  // namespace
}  // namespace pdsp
