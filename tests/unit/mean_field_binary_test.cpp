// Mean field's sweep written out for binary pairwise graphs (colour classes, SIMD exp) against the
// general sweep (file order): the same data set with one more example, a lone three-state
// variable, takes the general path. The two visit the variables in different orders, so they
// are compared at the fixed point they converge to, at couplings where mean field has one, and
// each is checked to be coordinate ascent: no sweep lowers the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pdsp/learning/approximate_crf.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

TEST(MeanField, TheBinaryPairwiseSweepReachesTheGeneralOnesFixedPoint) {
  const Dataset binary = testing::random_dataset({testing::grid_shape(4, 5)}, 4, 17);
  const Dataset mixed =
      testing::random_dataset({testing::grid_shape(4, 5), testing::chain_shape(1, 3)}, 4, 17);
  for (const double scale : {0.2, 0.4, 0.6}) {
    const std::vector<double> theta = testing::normal_theta(4, scale, 3);
    ApproximateCrf fast(binary, ApproximateInference::MeanField, 5000, 1e-14);
    ApproximateCrf general(mixed, ApproximateInference::MeanField, 5000, 1e-14);
    fast.set_theta(theta);
    general.set_theta(theta);
    fast.infer_all();
    general.infer_all();
    ASSERT_TRUE(fast.converged(0) && general.converged(0)) << scale;
    EXPECT_NEAR(fast.example_log_z()[0], general.example_log_z()[0],
                1e-11 * (1 + std::abs(general.example_log_z()[0])))
        << scale;
    const int64_t states = binary.num_states();  // the grid's states come first in both
    for (int64_t i = 0; i < states; ++i)
      ASSERT_NEAR(fast.beliefs()[i], general.beliefs()[i], 1e-10) << scale << " state " << i;
  }
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
