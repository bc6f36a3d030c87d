// The latent learner (CCCP, learners/latent) against brute force on small trees with some labels
// unobserved: the objective it reports at every step is the exact difference of the two smax
// sums, it falls at every step, and it ends at a stationary point of the exact objective;
// without an unobserved label it is the primal-dual learner.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "support/brute_force.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Keeps each CCCP step's record and the theta it ended at.
class StepRecorder final : public TrainingObserver {
 public:
  void on_iteration(const IterationRecord& record) override { records.push_back(record); }
  StopReason after_iteration(TrainingState& state, const IterationRecord&,
                             const StopReason&) override {
    thetas.push_back(state.theta);
    return no_stop();
  }
  std::vector<IterationRecord> records;
  std::vector<std::vector<double>> thetas;
};

constexpr double kC = 0.5;

// F(theta) by enumeration: the loss-augmented smax at eps 1 less the smax with the observed
// labels held at the completion's temperature.
double exact_cccp_objective(const Dataset& data, std::span<const double> theta,
                            double completion_epsilon) {
  const testing::ExactSolution augmented = testing::solve_exactly(data, theta, 1.0, 1.0, kC, 2.0);
  const testing::ExactSolution clamped =
      testing::solve_exactly(data, theta, completion_epsilon, 0.0, kC, 2.0, {}, data.label);
  double regulariser = 0;
  for (double t : theta) regulariser += 0.5 * kC * t * t;
  return augmented.smax_sum - clamped.smax_sum + regulariser;
}

Dataset partly_labelled(uint64_t seed, double unobserved) {
  Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(5, 3), testing::tree_shape()}, 6, seed);
  std::mt19937_64 rng(seed);
  for (int32_t& y : data.label)
    if (std::uniform_real_distribution<double>(0, 1)(rng) < unobserved) y = -1;
  return data;
}

TrainConfig exact_config() {
  TrainConfig config;
  config.learner = "latent";
  config.data = "tiny";
  config.epsilon = 1.0;
  config.counting = CountingMode::Bethe;  // exact on trees
  config.C = kC;
  config.sweeps = 10;
  config.max_iters = 40;
  config.inner_iters = 400;
  config.tol = 1e-13;
  config.inference_tol = 1e-14;
  config.inference_sweeps = 500;
  return config;
}

// The completion at the training temperature (the default) and colder (--completion-epsilon).
class LatentLearnerAtCompletionTemperature : public ::testing::TestWithParam<double> {};

TEST_P(LatentLearnerAtCompletionTemperature, ObjectiveIsExactFallsEveryStepAndEndsStationary) {
  const Dataset data = partly_labelled(5, 0.4);
  ASSERT_GT(std::count(data.label.begin(), data.label.end(), -1), 3);
  const double completion_epsilon = GetParam();
  TrainConfig config = exact_config();
  config.completion_epsilon = completion_epsilon;
  SerialCommunicator serial;
  std::unique_ptr<Learner> learner = find_learner("latent").make();
  learner->set_up(data, config, serial);
  StepRecorder steps;
  const TrainResult result = learner->run(steps, {});
  ASSERT_GE(steps.records.size(), 3u);
  ASSERT_EQ(steps.records.size(), steps.thetas.size());
  for (size_t k = 0; k < steps.records.size(); ++k) {
    const IterationRecord& record = steps.records[k];
    EXPECT_NEAR(record.objective_after_step,
                exact_cccp_objective(data, steps.thetas[k], completion_epsilon),
                1e-9 * std::abs(record.objective_after_step))
        << "step " << record.iteration;
    EXPECT_LE(record.objective_after_step, record.objective + 1e-12 * std::abs(record.objective))
        << "step " << record.iteration << ": CCCP never raises the objective";
    if (k > 0) {
      EXPECT_EQ(record.objective, steps.records[k - 1].objective_after_step);
    }
  }
  EXPECT_LT(steps.records.back().objective_after_step, 0.99 * steps.records.front().objective);
  // A stationary point of the exact F: central differences vanish.
  const std::vector<double>& theta = result.state.theta;
  const double h = 1e-5;
  for (size_t r = 0; r < theta.size(); ++r) {
    std::vector<double> up = theta, down = theta;
    up[r] += h;
    down[r] -= h;
    EXPECT_NEAR((exact_cccp_objective(data, up, completion_epsilon) -
                 exact_cccp_objective(data, down, completion_epsilon)) /
                    (2 * h),
                0.0, 1e-5)
        << "parameter " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(LatentLearner, LatentLearnerAtCompletionTemperature,
                         ::testing::Values(1.0, 0.3));

TEST(LatentLearner, WithEveryLabelObservedItIsThePrimalDualLearner) {
  const Dataset data = partly_labelled(7, 0.0);
  TrainConfig config = exact_config();
  SerialCommunicator serial;
  std::unique_ptr<Learner> latent = find_learner("latent").make();
  latent->set_up(data, config, serial);
  testing::Recorder steps;
  const TrainResult cccp = latent->run(steps, {});
  ASSERT_GE(steps.records.size(), 1u);
  EXPECT_NEAR(steps.records.front().objective_after_step, cccp.objective,
              1e-9 * std::abs(cccp.objective))
      << "the first step solves it: the completion is the labels themselves";

  TrainConfig plain = exact_config();
  plain.learner = "primal-dual";
  plain.max_iters = plain.inner_iters;
  std::unique_ptr<Learner> primal_dual = find_learner("primal-dual").make();
  primal_dual->set_up(data, plain, serial);
  testing::Recorder records;
  const TrainResult reference = primal_dual->run(records, {});
  ASSERT_EQ(cccp.state.theta.size(), reference.state.theta.size());
  for (size_t r = 0; r < cccp.state.theta.size(); ++r)
    EXPECT_NEAR(cccp.state.theta[r], reference.state.theta[r], 1e-7) << "parameter " << r;
  // With every label held the clamped smax is the labels' score: F is the primal-dual F.
  EXPECT_NEAR(cccp.objective, reference.objective, 1e-9 * std::abs(reference.objective));
}

}  // namespace
}  // namespace pdsp
