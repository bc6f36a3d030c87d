// When the likelihood baselines run which starts (issue 42): the line search's cheap trials (the
// accepted state and the starts pulled towards each state), every start at each accepted point,
// the rule that decides whether the cheap trials' step holds, and the damping rule that keeps
// training's view of prediction's starts equal to prediction's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "pdsp/learners/likelihood/crf_baselines.hpp"
#include "pdsp/learners/likelihood/likelihood.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::Recorder;

Evaluation evaluation(double value, bool valid) {
  Evaluation e;
  e.value = value;
  e.valid = valid;
  return e;
}

TEST(TrialStepHolds, KeepsAValidStepThatStillDecreasesEnough) {
  // From L = 1 along a slope of -2, a step of 0.5 must reach 1 - 1e-4 * 0.5 * 2 = 0.9999.
  EXPECT_TRUE(trial_step_holds(evaluation(0.9, true), 1.0, 0.5, -2.0));
  EXPECT_TRUE(trial_step_holds(evaluation(0.9999, true), 1.0, 0.5, -2.0));
  // The other starts found a fixed point that raises L above the sufficient decrease.
  EXPECT_FALSE(trial_step_holds(evaluation(0.99995, true), 1.0, 0.5, -2.0));
  EXPECT_FALSE(trial_step_holds(evaluation(1.2, true), 1.0, 0.5, -2.0));
  // Or left the point not valid (unconverged, or a negative NLL), however low its value.
  EXPECT_FALSE(trial_step_holds(evaluation(0.5, false), 1.0, 0.5, -2.0));
}

// Both evaluations of `theta` from the same accepted state (zero messages or uniform beliefs).
std::pair<Evaluation, Evaluation> trial_and_all(const Dataset& data, ApproximateInference kind,
                                                const std::vector<double>& theta) {
  SerialCommunicator serial;
  std::vector<double> grad(theta.size());
  ApproximateCrf crf(data, kind, 500, 1e-10);
  Likelihood likelihood(crf, 0.0, serial);
  const Evaluation trial = likelihood.evaluate(theta, grad, Likelihood::Starts::Trial);
  const Evaluation all = likelihood.evaluate(theta, grad, Likelihood::Starts::All);
  return {trial, all};
}

TEST(Likelihood, ACheapTrialNeverExceedsTheEvaluationWithEveryStart) {
  // The starts All adds only add fixed points of larger log Z: L can only rise.
  const Dataset data = testing::denoising_grids({true, false});
  for (const auto kind : {ApproximateInference::LoopyBp, ApproximateInference::MeanField})
    for (const double coupling : {0.5, 1.5, 3.0}) {
      const auto [trial, all] = trial_and_all(data, kind, {2.0, coupling});
      EXPECT_LE(trial.value, all.value + 1e-12) << inference_name(kind) << " " << coupling;
    }
}

TEST(Likelihood, ACheapTrialFindsWhatThePulledStartFinds) {
  // Mean field on the frustrated triangle: only the start pulled towards 1 reaches all 1, and
  // the trial has it, so it keeps the same fixed point as the evaluation with every start.
  const Dataset data = testing::frustrated_triangle();
  const auto [trial, all] = trial_and_all(data, ApproximateInference::MeanField, {1.0, 5.0});
  EXPECT_TRUE(trial.valid);
  EXPECT_EQ(trial.negative, 0);
  EXPECT_NEAR(trial.value, all.value, 1e-9);
}

// Training's starts (a warm current state, zero messages among the others) and prediction's (a
// fresh object: zero messages as its current state) damp the same starts and settle onto the
// same fixed points, so training's view of prediction's best fixed point is prediction's: with
// a sweep cap low enough that some starts need damping, example by example.
TEST(ApproximateCrf, TrainingAndPredictionDampTheSameStarts) {
  const Dataset data = testing::denoising_grids({true, false, true});
  for (const auto kind : {ApproximateInference::LoopyBp, ApproximateInference::MeanField})
    for (const double coupling : {1.0, 2.0, 3.0})
      for (const int sweeps : {3, 6, 12, 24, 200}) {
        const std::vector<double> theta = {2.5, coupling};
        ApproximateCrf training(data, kind, sweeps, 1e-5);
        training.set_theta(theta);
        training.infer_all();
        training.accept();  // a warm state, wherever it ended
        std::vector<int> chosen;
        training.infer_all_best_start(chosen, false, ApproximateCrf::CurrentState::Warm);
        ApproximateCrf prediction(data, kind, sweeps, 1e-5);
        prediction.set_theta(theta);
        prediction.infer_all_best_start(chosen);
        for (int64_t n = 0; n < data.num_examples(); ++n)
          EXPECT_DOUBLE_EQ(training.cold_log_z()[n], prediction.cold_log_z()[n])
              << inference_name(kind) << ", coupling " << coupling << ", sweeps " << sweeps
              << ", example " << n;
      }
}

// A start that settles next to a fixed point one of prediction's earlier starts found is moved
// onto it: the same start is chosen, with the same log Z up to the inference tolerance, for
// fewer sweeps than when every start runs to its own convergence.
TEST(ApproximateCrf, AStartSettlingNextToAFoundFixedPointStopsThere) {
  const Dataset data = testing::denoising_grids({true, false, true});
  int64_t fewer = 0;
  for (const auto kind : {ApproximateInference::LoopyBp, ApproximateInference::MeanField})
    for (const double coupling : {0.5, 1.0, 2.0, 3.0}) {
      const std::vector<double> theta = {2.5, coupling};
      ApproximateCrf settled(data, kind, 1000, 1e-10);
      ApproximateCrf full(data, kind, 1000, 1e-10);
      full.set_settle_distance(0.0);
      std::vector<int> settled_start, full_start;
      settled.set_theta(theta);
      full.set_theta(theta);
      const InferenceSummary a = settled.infer_all_best_start(settled_start, true);
      const InferenceSummary b = full.infer_all_best_start(full_start, true);
      const std::string where = inference_name(kind) + " " + std::to_string(coupling);
      EXPECT_EQ(settled_start, full_start) << where;
      EXPECT_EQ(a.unconverged, b.unconverged) << where;
      for (int64_t n = 0; n < data.num_examples(); ++n)
        EXPECT_NEAR(settled.example_log_z()[n], full.example_log_z()[n], 1e-7) << where;
      EXPECT_LE(a.sweeps, b.sweeps) << where;
      fewer += a.sweeps < b.sweeps;
    }
  EXPECT_GT(fewer, 0);
}

// Every point L-BFGS accepts is evaluated with every start: the last one, evaluated afresh with
// every start from prediction's state, gives its value; no accepted point has a negative NLL.
TEST(CrfBaselines, LbfgsAcceptsOnlyPointsEvaluatedWithEveryStart) {
  const Dataset data = testing::denoising_grids({true, false});
  for (const char* learner : {"lbp-lbfgs", "mf-lbfgs"}) {
    BaselineConfig config;
    parse_baseline_learner(learner, config);
    config.max_iters = 15;
    config.tol = 1e-9;
    ApproximateCrf crf(data, config.inference, 1000, 1e-12);
    SerialCommunicator serial;
    Recorder recorder;
    const TrainResult result = train_crf_baseline(crf, config, serial, recorder);
    ASSERT_GE(recorder.records.size(), 3u) << learner;
    for (const IterationRecord& r : recorder.records) {
      EXPECT_EQ(r.negative_nll_examples, 0) << learner << " " << r.iteration;
      EXPECT_GE(r.all_start_searches, 0) << learner << " " << r.iteration;
    }
    ApproximateCrf fresh(data, config.inference, 1000, 1e-12);
    Likelihood likelihood(fresh, config.C, serial);
    std::vector<double> grad(2);
    // Up to the margin within which two starts count as the same fixed point (1e-6 of each
    // example's log Z, about 50 here, over 32 variables): training's warm state keeps its own.
    EXPECT_NEAR(likelihood.evaluate(result.state.theta, grad).value, result.objective, 5e-6)
        << learner;
  }
}

}  // namespace
}  // namespace pdsp
