// The likelihood baselines' inference on binary pairwise graphs (loopy BP through the binary
// pairwise kernels, mean field's sweep written out for two states; both by colour classes)
// against the general path (file order): the same data set with one more example, a lone
// three-state variable, takes the general path. The two visit the variables in different
// orders, so they are compared at the fixed point they converge to, at couplings where there is
// one; and mean field's sweep is checked to be coordinate ascent: no sweep lowers the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pdsp/learning/approximate_crf.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Converged inference of `kind` on a 4x5 grid at theta of scale `scale`, both ways: the same log
// Z, variable beliefs and factor beliefs.
void expect_the_general_fixed_point(ApproximateInference kind, double scale) {
  const Dataset binary = testing::random_dataset({testing::grid_shape(4, 5)}, 4, 17);
  const Dataset mixed =
      testing::random_dataset({testing::grid_shape(4, 5), testing::chain_shape(1, 3)}, 4, 17);
  const std::vector<double> theta = testing::normal_theta(4, scale, 3);
  ApproximateCrf fast(binary, kind, 5000, 1e-14);
  ApproximateCrf general(mixed, kind, 5000, 1e-14);
  fast.set_theta(theta);
  general.set_theta(theta);
  fast.infer_all();
  general.infer_all();
  const std::string where = inference_name(kind) + " " + std::to_string(scale);
  ASSERT_TRUE(fast.converged(0) && general.converged(0)) << where;
  EXPECT_NEAR(fast.example_log_z()[0], general.example_log_z()[0],
              1e-10 * (1 + std::abs(general.example_log_z()[0])))
      << where;
  // The grid's states come first in both, then its tables.
  const int64_t states = binary.num_states();
  for (int64_t i = 0; i < states; ++i)
    ASSERT_NEAR(fast.beliefs()[i], general.beliefs()[i], 1e-9) << where << " state " << i;
  for (int64_t i = 0; i < binary.num_table_entries(); ++i)
    ASSERT_NEAR(fast.beliefs()[states + i], general.beliefs()[mixed.num_states() + i], 1e-9)
        << where << " table entry " << i;
}

TEST(ExampleLoopyBp, TheBinaryKernelsReachTheGeneralKernelsFixedPoint) {
  for (const double scale : {0.3, 0.7, 1.0})
    expect_the_general_fixed_point(ApproximateInference::LoopyBp, scale);
}

TEST(MeanField, TheBinaryPairwiseSweepReachesTheGeneralOnesFixedPoint) {
  for (const double scale : {0.2, 0.4, 0.6})
    expect_the_general_fixed_point(ApproximateInference::MeanField, scale);
}

TEST(MeanField, NoBinaryPairwiseSweepLowersTheBound) {
  const Dataset binary = testing::random_dataset({testing::grid_shape(5, 5)}, 4, 21);
  for (const double scale : {0.5, 2.0, 4.0}) {
    const std::vector<double> theta = testing::normal_theta(4, scale, 5);
    double previous = -INFINITY;
    for (int sweeps = 1; sweeps <= 30; ++sweeps) {
      // Inference from uniform beliefs capped at `sweeps` sweeps: the bound after each.
      ApproximateCrf crf(binary, ApproximateInference::MeanField, sweeps, 0.0);
      crf.set_theta(theta);
      const double bound = crf.infer_all().log_z;
      EXPECT_GE(bound, previous - 1e-12 * std::abs(bound)) << scale << " sweep " << sweeps;
      previous = bound;
    }
  }
}

}  // namespace
}  // namespace pdsp
