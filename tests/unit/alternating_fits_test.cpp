// Domke's alternation (learners/domke): with linear classes, F(theta, lambda) is jointly convex
// (counting numbers >= 0), each fit minimises it exactly over one kind's parameters at fixed
// messages and each sweep over message blocks, so the fits reach the primal-dual learner's
// optimum; with networks every outer iteration lowers F; the generic L-BFGS minimiser they use
// finds the minimum of a quadratic.
#include "pdsp/learners/domke/alternating_fits.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "pdsp/features/function_class_model.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/optim/lbfgs_minimize.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;
using testing::Recorder;

TEST(LbfgsMinimize, FindsTheMinimumOfAQuadratic) {
  // f(x) = 1/2 x'Ax - b'x with A = diag(1..6) + 0.5 (a coupling): minimum at A^-1 b.
  const int n = 6;
  const auto f = [&](std::span<const double> x, std::span<double> g) {
    double value = 0, sum = 0;
    for (int i = 0; i < n; ++i) sum += x[i];
    for (int i = 0; i < n; ++i) {
      g[i] = (i + 1) * x[i] + 0.5 * sum - 1.0;
      value += 0.5 * (i + 1) * x[i] * x[i] - x[i];
    }
    return value + 0.25 * sum * sum;
  };
  std::vector<double> x(n, 3.0);
  const MinimizeResult result = minimize_lbfgs(f, x, {.max_iters = 100, .gradient_tol = 1e-9});
  EXPECT_TRUE(result.converged) << result.iterations << " iterations, |g| " << result.grad_norm;
  EXPECT_LT(result.iterations, 30);
  std::vector<double> g(n);
  f(x, g);
  for (double gi : g) EXPECT_NEAR(gi, 0.0, 1e-9);
}

TEST(AlternatingFits, LinearFitsReachThePrimalDualOptimum) {
  const Dataset data =
      testing::random_compact_dataset({testing::loopy_shape(), testing::chain_shape(4, 3)}, 29);
  TrainConfig config;
  config.epsilon = 1.0;
  config.counting = CountingMode::Uniform;
  config.sweeps = 5;
  config.max_iters = 3000;
  config.tol = 1e-13;
  SerialCommunicator serial;
  Recorder primal_dual;
  LocalProblem reference(data, testing::training_settings(1.0, CountingMode::Uniform));
  const TrainResult optimum = train(reference, config, serial, primal_dual);
  ASSERT_EQ(optimum.stop.kind, StopKind::Converged) << optimum.stop.text;

  config.max_iters = 300;
  config.tol = 1e-15;
  config.fit_sweeps = 25;
  config.fit_iters = 200;
  LocalProblem problem(data, testing::training_settings(1.0, CountingMode::Uniform));
  Recorder fits;
  const TrainResult fitted = train_alternating_fits(problem, config, serial, fits);
  EXPECT_LT(max_abs_difference(fitted.state.theta, optimum.state.theta), 1e-6) << fitted.stop.text;
  EXPECT_NEAR(fitted.objective, optimum.objective, 1e-9 * std::abs(optimum.objective));
  for (const IterationRecord& record : fits.records) EXPECT_TRUE(std::isnan(record.dual));
}

TEST(AlternatingFits, EveryOuterIterationLowersFWithNetworks) {
  const Dataset data = testing::random_compact_dataset(
      {testing::loopy_shape(), testing::tree_shape(), testing::chain_shape(5, 3)}, 3);
  TrainConfig config;
  config.epsilon = 0.5;
  config.max_iters = 8;
  config.tol = 0;
  config.fit_sweeps = 10;
  config.fit_iters = 30;
  FunctionClasses networks;
  networks.unary = networks.pairwise = FunctionClass::Mlp;
  networks.hidden = 4;
  LocalProblem problem(data, testing::training_settings(0.5, CountingMode::Uniform),
                       std::make_unique<FunctionClassModel>(data, networks));
  SerialCommunicator serial;
  Recorder recorder;
  train_alternating_fits(problem, config, serial, recorder);
  ASSERT_EQ(recorder.records.size(), 8u);
  for (size_t k = 1; k < recorder.records.size(); ++k)
    EXPECT_LE(
        recorder.records[k].objective,
        recorder.records[k - 1].objective + 1e-12 * std::abs(recorder.records[k - 1].objective))
        << "iteration " << k + 1;
  EXPECT_LT(recorder.records.back().objective, recorder.records.front().objective);
}

}  // namespace
}  // namespace pdsp
