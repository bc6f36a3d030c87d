// Loopy BP through the binary pairwise kernels against the general kernels: the same data set
// with one more example, a lone three-state variable, takes the general path. The sweeps visit
// the variables in another order (colour classes, not file order), so only the fixed points
// they converge to are compared, at couplings where loopy BP has one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pdsp/learning/approximate_crf.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

TEST(ExampleLoopyBp, TheBinaryKernelsReachTheGeneralKernelsFixedPoint) {
  const Dataset binary = testing::random_dataset({testing::grid_shape(4, 5)}, 4, 17);
  const Dataset mixed =
      testing::random_dataset({testing::grid_shape(4, 5), testing::chain_shape(1, 3)}, 4, 17);
  for (const double scale : {0.3, 0.7, 1.0}) {
    const std::vector<double> theta = testing::normal_theta(4, scale, 3);
    ApproximateCrf fast(binary, ApproximateInference::LoopyBp, 5000, 1e-13);
    ApproximateCrf general(mixed, ApproximateInference::LoopyBp, 5000, 1e-13);
    fast.set_theta(theta);
    general.set_theta(theta);
    fast.infer_all();
    general.infer_all();
    ASSERT_TRUE(fast.converged(0) && general.converged(0)) << scale;
    EXPECT_NEAR(fast.example_log_z()[0], general.example_log_z()[0],
                1e-10 * (1 + std::abs(general.example_log_z()[0])))
        << scale;
    // Variable and factor beliefs: the grid's states come first in both, then its tables.
    const int64_t states = binary.num_states();
    for (int64_t i = 0; i < states; ++i)
      ASSERT_NEAR(fast.beliefs()[i], general.beliefs()[i], 1e-9) << scale << " state " << i;
    for (int64_t i = 0; i < binary.num_table_entries(); ++i)
      ASSERT_NEAR(fast.beliefs()[states + i], general.beliefs()[mixed.num_states() + i], 1e-9)
          << scale << " table entry " << i;
  }
}

}  // namespace
}  // namespace pdsp
