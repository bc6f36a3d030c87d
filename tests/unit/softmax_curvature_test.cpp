// The soft-max curvature of typed variable blocks (SoftmaxCurvature): its product equals
// sum_v Cov(b_v) (x) x_v x_v' / tau written out by hand from the beliefs and observations, on
// chains of three-state variables, leaves the parameters outside the blocks alone, and does not
// depend on the thread count.
#include "pdsp/learners/primal_dual/softmax_curvature.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

TEST(SoftmaxCurvature, MultiplyIsTheCurvatureWrittenOutByHand) {
  const Dataset data = testing::ternary_chains_dataset(17);
  const double tau = 0.6;
  LocalProblem problem(data, {tau, CountingMode::Uniform, 1.0, true, "tiny"});
  testing::evaluate_at_random_theta(problem, 11);

  // Variable type 0 reads observation rows of dimension 3.
  const TypedBlock block{0, data.var_types.param_offset[0], 3, data.var_types.dim[0]};
  ASSERT_EQ(block.dim, 3);
  SerialCommunicator serial;
  const SoftmaxCurvature curvature(problem, serial, {block});

  const auto n = static_cast<size_t>(data.num_params);
  std::vector<double> in(n), expected(n, -7.0), out(n, -7.0);
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (double& v : in) v = normal(rng);
  const std::span<const double> belief = problem.beliefs();
  int blocked = 0;
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    if (data.var_types.type[v] != 0) continue;
    ++blocked;
    const LocalIndex row = data.var_types.obs_row[v];
    std::vector<double> x(3, 0.0);
    for (int64_t e = data.observations.ptr[row]; e < data.observations.ptr[row + 1]; ++e)
      x[data.observations.index[e]] = data.observations.value_at(e);
    const double* p = &belief[data.state_offset[v]];
    for (int s = 0; s < 3; ++s)
      for (int i = 0; i < 3; ++i) {
        double& e = expected[block.offset + s * 3 + i];
        if (e == -7.0) e = 0.0;
        for (int t = 0; t < 3; ++t)
          for (int j = 0; j < 3; ++j)
            e += ((s == t ? p[s] : 0.0) - p[s] * p[t]) / tau * x[i] * x[j] *
                 in[block.offset + t * 3 + j];
      }
  }
  ASSERT_GT(blocked, 3);
  curvature.multiply(in, out);
  EXPECT_LT(testing::max_abs_difference(out, expected), 1e-12);

  // The variables are summed in fixed chunks: the same bits for any thread count.
  std::vector<double> one_thread(n, -7.0);
  omp_set_num_threads(1);
  curvature.multiply(in, one_thread);
  omp_set_num_threads(2);
  EXPECT_EQ(one_thread, out);
}

}  // namespace
}  // namespace pdsp
