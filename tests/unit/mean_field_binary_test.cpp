// Mean field's sweep written out for binary pairwise graphs against the general sweep: the same
// data set with one more example, a lone three-state variable, takes the general path.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pdsp/learning/approximate_crf.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

TEST(MeanField, TheBinaryPairwiseSweepMatchesTheGeneralOne) {
  const Dataset binary = testing::random_dataset({testing::grid_shape(4, 5)}, 4, 17);
  const Dataset mixed =
      testing::random_dataset({testing::grid_shape(4, 5), testing::chain_shape(1, 3)}, 4, 17);
  for (const double scale : {0.5, 2.0, 4.0}) {
    std::vector<double> theta = testing::normal_theta(4, scale, 3);
    // A few sweeps (not yet converged) and to convergence: the same trajectory.
    for (const int sweeps : {3, 500}) {
      ApproximateCrf fast(binary, ApproximateInference::MeanField, sweeps, 1e-13);
      ApproximateCrf general(mixed, ApproximateInference::MeanField, sweeps, 1e-13);
      fast.set_theta(theta);
      general.set_theta(theta);
      fast.infer_all();
      general.infer_all();
      EXPECT_NEAR(fast.example_log_z()[0], general.example_log_z()[0],
                  1e-12 * (1 + std::abs(general.example_log_z()[0])))
          << scale << " " << sweeps;
      EXPECT_EQ(fast.converged(0), general.converged(0)) << scale << " " << sweeps;
      const int64_t states = binary.num_states();  // the grid's states come first in both
      for (int64_t i = 0; i < states; ++i)
        ASSERT_NEAR(fast.beliefs()[i], general.beliefs()[i], 1e-12) << scale << " " << sweeps;
    }
  }
}

}  // namespace
}  // namespace pdsp
