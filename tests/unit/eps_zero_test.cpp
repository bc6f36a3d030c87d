// Training at eps = 0 (the structured SVM) by continuation in the temperature: it stops with a
// certified gap, and reaches the reference optimum computed without pdsp's kernels: the exact
// structured SVM over every labelling on trees, the local-polytope relaxation on loops.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "pdsp/learners/primal_dual/trainer.hpp"
#include "support/checkpoint_round_trip.hpp"
#include "support/ssvm_reference.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::Snapshot;
using testing::SsvmPoints;

struct Trained {
  TrainResult result;
  std::vector<IterationRecord> records;
};

Trained train_at_zero(const Dataset& data, double C, double tol) {
  TrainConfig config;
  config.epsilon = 0;
  config.C = C;
  config.tol = tol;
  config.max_iters = 20000;
  // At low temperatures one sweep per step leaves the messages far from their minimum, and F_w
  // far above the eps = 0 primal (the trees stop 2e-3 above tol with one).
  config.sweeps = 20;
  LocalProblem problem(data, {0.0, CountingMode::Auto, 1.0, true, "tiny"});
  SerialCommunicator serial;
  testing::Recorder recorder;
  Trained out{train(problem, config, serial, recorder), {}};
  out.records = recorder.records;
  return out;
}

// The certificate holds (the reference optimum lies between pdsp's bounds), the gap met tol, and
// theta is as close to the reference's as strong convexity allows: C/2 |theta - theta*|^2 is at
// most P(theta) - P(theta*).
void expect_certified_optimum(const Dataset& data, double C, double tol, SsvmPoints points) {
  const testing::SsvmReference reference = testing::solve_ssvm(data, 1.0, C, points);
  const Trained run = train_at_zero(data, C, tol);
  ASSERT_EQ(run.result.stop.kind, StopKind::Converged) << run.result.stop.text;
  ASSERT_TRUE(run.result.stop.text.starts_with("converged: primal-dual gap at eps = 0"))
      << run.result.stop.text;
  const IterationRecord& last = run.records.back();
  const double scale = std::max(1.0, std::abs(reference.primal));
  EXPECT_LE(last.gap, tol * std::max(1.0, std::abs(last.objective_after_step)));
  EXPECT_LE(last.dual, reference.primal + 1e-9 * scale) << "D_0 is a lower bound";
  EXPECT_GE(last.objective, reference.dual - 1e-9 * scale) << "F_w is an upper bound";
  // The primal at pdsp's theta (before its last step, the point the certificate is about).
  const double primal_at_pdsp = testing::ssvm_primal(data, run.result.state.theta, 1.0, C, points);
  const double suboptimality = primal_at_pdsp - reference.dual;
  EXPECT_LE(suboptimality, last.gap + 1e-9 * scale);
  EXPECT_LE(testing::max_abs_difference(run.result.state.theta, reference.theta),
            std::sqrt(2 * std::max(suboptimality, 0.0) / C) + 1e-6);
  // Training ran at several temperatures, each lower than the one before.
  double temperature = INFINITY;
  int temperatures = 0;
  for (const IterationRecord& r : run.records) {
    EXPECT_LE(r.temperature, temperature);
    if (r.temperature < temperature) ++temperatures;
    temperature = r.temperature;
    EXPECT_FALSE(std::isnan(r.smoothed_gap));
  }
  EXPECT_GT(temperatures, 1);
}

TEST(EpsZero, ReachesTheExactStructuredSvmOptimumOnTrees) {
  const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(4), testing::tree_shape()}, 5, 31);
  for (double C : {1.0, 0.1}) {
    SCOPED_TRACE("C " + std::to_string(C));
    expect_certified_optimum(data, C, 1e-4, SsvmPoints::Labellings);
  }
}

TEST(EpsZero, ReachesTheLocalPolytopeOptimumOnLoops) {
  const auto [data, excess] = testing::loops_with_a_loose_relaxation();
  ASSERT_GT(excess, 1e-6) << "the relaxation must differ from the exact structured SVM";
  expect_certified_optimum(data, 1.0, 1e-4, SsvmPoints::HalfIntegralLocalPolytope);
}

TEST(EpsZero, ResumeFromACheckpointContinuesBitwise) {
  const testing::GraphShape triangle{{2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}}};
  const Dataset data = testing::random_dataset({triangle, testing::grid_shape(2, 3)}, 4, 5);
  TrainConfig config;
  config.epsilon = 0;
  config.sweeps = 20;
  config.tol = 1e-7;  // not 0: the temperature drops by the ratio of tol to the entropy terms
  config.max_iters = 40;
  const ProblemSettings settings{0.0, CountingMode::Auto, 1.0, true, "tiny"};
  SerialCommunicator serial;
  LocalProblem whole(data, settings);
  Snapshot uninterrupted(25, &whole);
  const TrainResult straight = train(whole, config, serial, uninterrupted);
  ASSERT_EQ(uninterrupted.state.iterations_done, 25);
  ASSERT_LT(uninterrupted.state.smoothing, config.smoothing_start) << "the temperature must move";
  ASSERT_FALSE(uninterrupted.state.dual_bundle.losses.empty()) << "the bundle must matter";

  const auto [state, messages] = testing::through_checkpoint(uninterrupted, 4);
  const auto [continued, records] = testing::resume(data, settings, config, state, messages);
  EXPECT_EQ(continued.state.theta, straight.state.theta);
  ASSERT_EQ(records.size(), 40u - 25u);
  testing::expect_same_continuation(uninterrupted.records, records, [](const IterationRecord& r) {
    return std::tie(r.objective, r.dual, r.temperature);
  });
}

}  // namespace
}  // namespace pdsp
