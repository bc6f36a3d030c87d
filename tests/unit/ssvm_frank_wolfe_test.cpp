// The structured SVM learner (block Frank-Wolfe with the exact LP oracle): it stops with a
// certified gap, and reaches the reference optima computed without pdsp's oracle (every
// labelling on trees, every half-integral point of the local polytope on loops); its F is the
// eps = 0 primal at the theta it returns; its dual never falls.
#include "pdsp/learners/ssvm_fw/ssvm_frank_wolfe.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "pdsp/learners/learner.hpp"
#include "pdsp/parallel/communicator.hpp"
#include "support/compact_data.hpp"
#include "support/ssvm_reference.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::SsvmPoints;

struct Trained {
  TrainResult result;
  std::vector<IterationRecord> records;
};

Trained train_fw(const Dataset& data, double C, double tol, int max_passes = 5000, int seed = 1) {
  SerialCommunicator serial;
  testing::Recorder recorder;
  SsvmConfig config;
  config.C = C;
  config.tol = tol;
  config.max_passes = max_passes;
  config.seed = seed;
  Trained out{train_ssvm_frank_wolfe(data, config, serial, recorder), {}};
  out.records = recorder.records;
  return out;
}

const testing::GraphShape kTriangle{{2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}}};
const testing::GraphShape kStar{{2, 2, 2, 2}, {{0, 1}, {0, 2}, {0, 3}}};

// The reference optimum lies between the bounds, the gap met tol, F is the primal at the theta
// returned, and theta is as close to the reference's as strong convexity allows.
void expect_certified_optimum(const Dataset& data, double C, double tol, SsvmPoints points) {
  const testing::SsvmReference reference = testing::solve_ssvm(data, 1.0, C, points);
  const Trained run = train_fw(data, C, tol);
  ASSERT_EQ(run.result.stop.kind, StopKind::Converged) << run.result.stop.text;
  ASSERT_TRUE(run.result.stop.text.starts_with("converged: primal-dual gap at eps = 0"))
      << run.result.stop.text;
  const IterationRecord& last = run.records.back();
  const double scale = std::max(1.0, std::abs(reference.primal));
  EXPECT_TRUE(last.gap_certified);
  EXPECT_LE(last.gap, tol * std::max(1.0, std::abs(last.objective)));
  EXPECT_LE(last.dual, reference.primal + 1e-9 * scale) << "D is a lower bound";
  EXPECT_GE(last.objective, reference.dual - 1e-9 * scale) << "F is an upper bound";
  const double primal = testing::ssvm_primal(data, run.result.state.theta, 1.0, C, points);
  EXPECT_NEAR(primal, last.objective, 1e-9 * scale) << "F is the primal at the model's theta";
  const double suboptimality = primal - reference.dual;
  EXPECT_LE(testing::max_abs_difference(run.result.state.theta, reference.theta),
            std::sqrt(2 * std::max(suboptimality, 0.0) / C) + 1e-6);
  for (size_t k = 1; k < run.records.size(); ++k)
    EXPECT_GE(run.records[k].dual, run.records[k - 1].dual - 1e-12 * scale)
        << "pass " << k + 1 << ": block steps with an exact line search never lower D";
}

TEST(SsvmFrankWolfe, ReachesTheExactStructuredSvmOptimumOnTrees) {
  const Dataset data = testing::random_dataset({kStar, testing::chain_shape(5), kStar}, 5, 31);
  for (double C : {1.0, 0.1}) {
    SCOPED_TRACE("C " + std::to_string(C));
    expect_certified_optimum(data, C, 1e-6, SsvmPoints::Labellings);
  }
}

TEST(SsvmFrankWolfe, ReachesTheLocalPolytopeOptimumOnLoops) {
  const auto [data, excess] = testing::loops_with_a_loose_relaxation();
  ASSERT_GT(excess, 1e-6) << "the relaxation must differ from the exact structured SVM";
  expect_certified_optimum(data, 1.0, 1e-6, SsvmPoints::HalfIntegralLocalPolytope);
}

TEST(SsvmFrankWolfe, CompactFeaturesReachTheOptimumOfTheirRowForm) {
  // Labels of their own types reading the instance's row and a shared table per label pair,
  // against the same model written as format 1's rows: the optima agree within the two
  // certified gaps, and so do the thetas, as strong convexity allows.
  const Dataset compact = testing::multi_label_dataset(6);
  const Dataset rows = testing::expand_to_rows(compact);
  const double C = 0.5;
  const Trained a = train_fw(compact, C, 1e-8);
  const Trained b = train_fw(rows, C, 1e-8);
  ASSERT_EQ(a.result.stop.kind, StopKind::Converged) << a.result.stop.text;
  ASSERT_EQ(b.result.stop.kind, StopKind::Converged) << b.result.stop.text;
  const double gaps = a.records.back().gap + b.records.back().gap;
  EXPECT_NEAR(a.records.back().objective, b.records.back().objective, gaps + 1e-12);
  EXPECT_LE(testing::max_abs_difference(a.result.state.theta, b.result.state.theta),
            2 * std::sqrt(2 * gaps / C) + 1e-9);
}

TEST(SsvmFrankWolfe, TheSeedChangesTheDrawsAndNotTheOptimum) {
  const Dataset data = testing::multi_label_dataset(12);
  const double C = 0.5;
  const Trained a = train_fw(data, C, 1e-8, 5000, 1);
  const Trained b = train_fw(data, C, 1e-8, 5000, 2);
  ASSERT_EQ(a.result.stop.kind, StopKind::Converged) << a.result.stop.text;
  ASSERT_EQ(b.result.stop.kind, StopKind::Converged) << b.result.stop.text;
  EXPECT_NE(a.records.front().dual, b.records.front().dual) << "another first-pass order";
  const double gaps = a.records.back().gap + b.records.back().gap;
  EXPECT_NEAR(a.records.back().objective, b.records.back().objective, gaps + 1e-12);
  EXPECT_LE(testing::max_abs_difference(a.result.state.theta, b.result.state.theta),
            2 * std::sqrt(2 * gaps / C) + 1e-9);
}

TEST(SsvmFrankWolfe, StopsAtItsPassLimitWithoutClaimingConvergence) {
  const Dataset data = testing::random_dataset({kTriangle, testing::grid_shape(2, 3)}, 4, 3);
  const Trained run = train_fw(data, 0.01, 1e-12, 3);
  EXPECT_EQ(run.result.stop, stop_iteration_limit());
  EXPECT_EQ(run.records.size(), 3u);
  EXPECT_GT(run.records.back().gap, 0.0);
}

TEST(SsvmFrankWolfe, RefusesDataThatIsNotBinaryPairwiseOrHasNoLabels) {
  // The learner's traits declare binary pairwise data, which the train command checks on the
  // slices; every rank throws the lowest failing rank's message (run_collectively).
  const Dataset ternary = testing::random_dataset({testing::chain_shape(3, 3)}, 3, 2);
  SerialCommunicator serial;
  try {
    check_learner_data(find_learner("ssvm-fw"), ternary, serial);
    FAIL() << "ternary data must be refused";
  } catch (const CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("is 3: --learner ssvm-fw needs binary variables"),
              std::string::npos)
        << e.what();
  }
  Dataset unlabelled = testing::random_dataset({kTriangle}, 3, 2);
  unlabelled.labelled = false;
  unlabelled.label.clear();
  try {
    train_fw(unlabelled, 1.0, 1e-3);
    FAIL() << "data without labels must be refused";
  } catch (const CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("/vars/label"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pdsp
