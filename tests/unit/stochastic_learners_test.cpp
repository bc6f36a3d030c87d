// The stochastic learners (dlpw, pegasos): pegasos's subgradient against finite differences of
// the exact eps = 0 objective; dlpw at batch 1 reaches the brute-force structured SVM optimum of
// small trees; with the batch equal to all examples and messages swept to convergence it
// reproduces the batch learner's optimum; the visiting order; selections of a LocalProblem
// write and read only their examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learners/stochastic/stochastic_steps.hpp"
#include "pdsp/learning/svm_objective.hpp"
#include "support/ssvm_reference.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

struct Trained {
  TrainResult result;
  std::vector<IterationRecord> records;
};

Trained train_with(const std::string& learner_name, const Dataset& data, TrainConfig config) {
  SerialCommunicator serial;
  testing::Recorder recorder;
  config.learner = learner_name;
  config.data = "tiny";
  std::unique_ptr<Learner> learner = find_learner(learner_name).make();
  learner->set_up(data, config, serial);
  TrainResult result = learner->run(recorder, {});
  return {std::move(result), recorder.records};
}

const testing::GraphShape kStar{{2, 2, 2, 2}, {{0, 1}, {0, 2}, {0, 3}}};

TEST(Pegasos, SubgradientMatchesFiniteDifferencesOfTheExactObjective) {
  const Dataset data = testing::random_dataset({kStar, testing::chain_shape(5), kStar}, 5, 7);
  SerialCommunicator serial;
  const double C = 0.7;
  SvmObjective objective(data, C, 1.0, serial);
  for (uint64_t seed : {1u, 2u, 3u}) {
    const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, seed);
    std::vector<double> gradient(theta.size(), 0.0);
    for (int64_t n = 0; n < data.num_examples(); ++n) objective.add_subgradient(n, theta, gradient);
    // F_0 is piecewise linear plus the regulariser: at a random theta no kink lies within h.
    const double h = 1e-6;
    for (size_t r = 0; r < theta.size(); ++r) {
      gradient[r] += C * theta[r];
      std::vector<double> up = theta, down = theta;
      up[r] += h;
      down[r] -= h;
      EXPECT_NEAR(gradient[r], (objective.value(up) - objective.value(down)) / (2 * h), 1e-6)
          << "seed " << seed << ", parameter " << r;
    }
  }
}

// Pegasos steps with the weighted average approach the optimum at the rate 1/t (measured: the
// excess times the epoch stays near 3 from epoch 300 to 3000 on these trees).
TEST(Dlpw, BatchOneReachesTheStructuredSvmOptimumOfTrees) {
  const Dataset data = testing::random_dataset({kStar, testing::chain_shape(5), kStar}, 5, 31);
  const double C = 1.0;
  const testing::SsvmReference reference =
      testing::solve_ssvm(data, 1.0, C, testing::SsvmPoints::Labellings);
  for (const std::string learner : {"dlpw", "pegasos"}) {
    SCOPED_TRACE(learner);
    TrainConfig config;
    config.epsilon = 0;
    config.C = C;
    config.max_iters = 3000;
    config.objective_every = 300;
    const Trained run = train_with(learner, data, config);
    ASSERT_EQ(run.records.size(), 3000u);
    EXPECT_EQ(run.result.stop.kind, StopKind::IterationLimit)
        << "no optimality test: no 'converged'";
    const double early = run.records[299].objective - reference.primal;
    const double late = run.records.back().objective - reference.primal;
    EXPECT_GE(late, reference.dual - reference.primal - 1e-9) << "F bounds the optimum from above";
    EXPECT_LT(late, 3e-4 * reference.primal);
    EXPECT_LT(late, early / 5) << "ten times the epochs";
    EXPECT_TRUE(std::isnan(run.records[298].objective)) << "F only every --objective-every";
    // F is the exact eps = 0 primal at the model, the average of the iterates.
    const double primal =
        testing::ssvm_primal(data, run.result.state.theta, 1.0, C, testing::SsvmPoints::Labellings);
    EXPECT_NEAR(primal, run.records.back().objective, 1e-9 * reference.primal);
    EXPECT_LE(testing::max_abs_difference(run.result.state.theta, reference.theta),
              std::sqrt(2 * std::max(primal - reference.dual, 0.0) / C) + 1e-6);
  }
}

// R large and the batch all examples: each step is the batch gradient at converged messages, so
// the steps and the average go to the batch learner's optimum (measured: 3e-9 relative after
// 300 epochs, round-off after 2,000).
TEST(Dlpw, FullBatchReproducesTheBatchLearnersOptimum) {
  const Dataset data =
      testing::random_dataset({testing::loopy_shape(), testing::chain_shape(4, 3)}, 6, 5);
  TrainConfig config;
  config.epsilon = 1.0;
  config.counting = CountingMode::Uniform;
  config.max_iters = 3000;
  config.tol = 1e-14;
  config.sweeps = 5;
  SerialCommunicator serial;
  testing::Recorder recorder;
  LocalProblem reference(data, testing::training_settings(1.0, CountingMode::Uniform));
  const TrainResult batch = train(reference, config, serial, recorder);
  ASSERT_EQ(batch.stop.kind, StopKind::Converged) << batch.stop.text;
  config.inner_sweeps = 60;
  config.batch = static_cast<int>(data.num_examples());
  config.objective_every = 100;
  config.max_iters = 1000;
  const Trained run = train_with("dlpw", data, config);
  const double excess = run.records.back().objective - batch.objective;
  EXPECT_LT(std::abs(excess), 1e-6 * std::abs(batch.objective));
  EXPECT_LE(testing::max_abs_difference(run.result.state.theta, batch.state.theta),
            std::sqrt(2 * std::max(excess, 0.0) / config.C) + 1e-6);
}

TEST(StochasticSteps, EachEpochVisitsAPermutationFixedBySeedAndEpoch) {
  const std::vector<int64_t> order = visiting_order(50, 3, 7);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t n = 0; n < 50; ++n) EXPECT_EQ(sorted[n], n);
  EXPECT_EQ(order, visiting_order(50, 3, 7));
  EXPECT_NE(order, visiting_order(50, 3, 8));
  EXPECT_NE(order, visiting_order(50, 4, 7));
}

TEST(Dlpw, RefusesCountingNumbersThatMakeASaddleAndDataWithoutLabels) {
  const Dataset loops = testing::random_dataset({testing::loopy_shape()}, 4, 3);
  TrainConfig config;
  config.counting = CountingMode::Bethe;
  EXPECT_NE(testing::error_of([&] {
              train_with("dlpw", loops, config);
            }).find("make F non-convex in the messages"),
            std::string::npos);
  Dataset unlabelled = loops;
  unlabelled.label.clear();
  unlabelled.labelled = false;
  config.counting = CountingMode::Uniform;
  EXPECT_NE(testing::error_of([&] {
              train_with("dlpw", unlabelled, config);
            }).find("training needs ground-truth labels"),
            std::string::npos);
}

}  // namespace
}  // namespace pdsp
