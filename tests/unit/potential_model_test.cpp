// The potential-model interface (potential_model.hpp) through LocalProblem and the trainer,
// against brute force: a nonlinear model (the features applied to tanh(theta)), whose F, beliefs
// and gradient must be the exact ones with the chain rule, and which trains to the exact
// stationary point without a certificate; the potential offset, in F, the beliefs, the dual and
// the certified gap; sweeps and evaluations over a subset of the examples.
#include "pdsp/features/potential_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/vector_ops.hpp"
#include "support/brute_force.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;
using testing::Recorder;

std::vector<double> squash(std::span<const double> theta) {
  std::vector<double> g(theta.size());
  for (size_t r = 0; r < theta.size(); ++r) g[r] = std::tanh(theta[r]);
  return g;
}

// f = Phi tanh(theta): nonlinear in theta, with the Jacobian Phi diag(1 - tanh^2(theta)).
class SquashedFeatures final : public PotentialModel {
 public:
  explicit SquashedFeatures(const Dataset& data) : linear_(data) {}
  std::string name() const override { return "squashed"; }
  bool is_linear() const override { return false; }
  int64_t num_params() const override { return linear_.num_params(); }
  void forward(std::span<const double> theta, std::span<const double> base,
               std::span<double> potential, std::span<const uint8_t> skip) const override {
    linear_.forward(squash(theta), base, potential, skip);
  }
  void backward(std::span<const double> theta, std::span<const double> weight, std::span<double> z,
                std::span<const uint8_t> skip) const override {
    linear_.backward(theta, weight, z, skip);
    chain(theta, z);
  }
  void forward_example(int64_t n, std::span<const double> theta, std::span<const double> base,
                       std::span<double> potential) const override {
    linear_.forward_example(n, squash(theta), base, potential);
  }
  void add_backward_example(int64_t n, std::span<const double> theta,
                            std::span<const double> weight, std::span<double> z) const override {
    std::vector<double> part(z.size(), 0.0);
    linear_.add_backward_example(n, theta, weight, part);
    chain(theta, part);
    for (size_t r = 0; r < z.size(); ++r) z[r] += part[r];
  }
  double largest_term(std::span<const double> theta) const override {
    return linear_.largest_term(squash(theta));
  }
  std::vector<uint8_t> parameter_kinds() const override { return linear_.parameter_kinds(); }

 private:
  static void chain(std::span<const double> theta, std::span<double> z) {
    for (size_t r = 0; r < z.size(); ++r) z[r] *= 1.0 - std::tanh(theta[r]) * std::tanh(theta[r]);
  }
  FeatureIndex linear_;
};

ProblemSettings bethe(double epsilon) {
  return testing::training_settings(epsilon, CountingMode::Bethe);
}

// Training at eps = 1 with Bethe numbers on trees, where F is the exact objective: enough sweeps
// to converge the messages before each gradient, and no stop before the iteration limit.
TrainConfig bethe_training(int max_iters) {
  TrainConfig config;
  config.epsilon = 1.0;
  config.counting = CountingMode::Bethe;
  config.sweeps = 10;
  config.max_iters = max_iters;
  config.tol = 1e-14;
  return config;
}

void sweep_to_convergence(LocalProblem& problem) {
  for (int sweep = 0; sweep < 500 && problem.sweep(1) > 1e-14; ++sweep) {
  }
}

// The gradient of F = sum smax - truth score at theta, as LocalProblem gives it (the trainer's
// local terms).
std::vector<double> local_gradient(LocalProblem& problem) {
  std::vector<double> z(static_cast<size_t>(problem.num_params()));
  std::vector<double> d(z.size());
  problem.model_moments(z);
  problem.ground_truth_moments(d);
  for (size_t r = 0; r < z.size(); ++r) z[r] -= d[r];
  return z;
}

TEST(NonlinearModel, ObjectiveBeliefsAndGradientAreTheExactOnesThroughTheChainRule) {
  const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(4, 3), testing::tree_shape()}, 5, 23);
  LocalProblem problem(data, bethe(0.7), std::make_unique<SquashedFeatures>(data));
  EXPECT_FALSE(problem.model().is_linear());
  const std::vector<double> theta = testing::normal_theta(5, 1.2, 4);
  problem.set_theta(theta);
  sweep_to_convergence(problem);
  problem.evaluate();

  // Brute force at the squashed parameters: the potentials of the model are those of the
  // linear features at tanh(theta).
  const testing::ExactSolution exact = testing::solve_exactly(data, squash(theta), 0.7, 1.0, 0, 2);
  EXPECT_NEAR(problem.objective() - problem.ground_truth_score(), exact.objective,
              1e-9 * std::abs(exact.objective));
  EXPECT_LT(max_abs_difference(problem.beliefs(), exact.marginals), 1e-9);
  const std::vector<double> gradient = local_gradient(problem);
  for (size_t r = 0; r < theta.size(); ++r)
    EXPECT_NEAR(gradient[r], exact.gradient[r] * (1 - std::pow(std::tanh(theta[r]), 2)), 1e-9)
        << "param " << r;
}

TEST(NonlinearModel, GradientMatchesFiniteDifferencesOfTheBruteForceObjective) {
  const Dataset data =
      testing::random_dataset({testing::chain_shape(5), testing::tree_shape()}, 4, 8);
  LocalProblem problem(data, bethe(1.0), std::make_unique<SquashedFeatures>(data));
  const std::vector<double> theta = testing::normal_theta(4, 0.8, 12);
  problem.set_theta(theta);
  sweep_to_convergence(problem);
  problem.evaluate();
  const std::vector<double> gradient = local_gradient(problem);
  const auto exact_f = [&](std::vector<double> at) {
    return testing::solve_exactly(data, squash(at), 1.0, 1.0, 0, 2).objective;
  };
  for (size_t r = 0; r < theta.size(); ++r) {
    const double h = 1e-5;
    std::vector<double> up = theta, down = theta;
    up[r] += h;
    down[r] -= h;
    EXPECT_NEAR(gradient[r], (exact_f(up) - exact_f(down)) / (2 * h), 1e-7) << "param " << r;
  }
}

TEST(NonlinearModel, TrainsToTheExactStationaryPointWithoutACertificate) {
  const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(5), testing::tree_shape()}, 4, 31);
  TrainConfig config = bethe_training(400);
  config.C = 0.5;
  config.lbfgs_curvature = "auto";  // a curvature model assumes linearity: not built here
  LocalProblem problem(data, bethe(1.0), std::make_unique<SquashedFeatures>(data));
  SerialCommunicator serial;
  Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);

  // grad of sum smax(Phi g) - d . g + C/2 |theta|^2 at the result, exactly.
  const std::vector<double>& theta = result.state.theta;
  const testing::ExactSolution exact = testing::solve_exactly(data, squash(theta), 1.0, 1.0, 0, 2);
  for (size_t r = 0; r < theta.size(); ++r)
    EXPECT_NEAR(exact.gradient[r] * (1 - std::pow(std::tanh(theta[r]), 2)) + config.C * theta[r],
                0.0, 1e-6)
        << "param " << r;
  ASSERT_FALSE(recorder.records.empty());
  for (const IterationRecord& record : recorder.records) {
    EXPECT_TRUE(std::isnan(record.dual));
    EXPECT_FALSE(record.gap_certified);
  }
  EXPECT_NE(result.stop.kind, StopKind::Converged);
}

TEST(NonlinearModel, EpsilonZeroIsRefusedInOneLine) {
  const Dataset data = testing::random_dataset({testing::chain_shape(3)}, 3, 2);
  TrainConfig config;
  config.epsilon = 0.0;
  config.counting = CountingMode::Uniform;
  config.data = "tiny.h5";
  ProblemSettings settings;
  settings.epsilon = 0.0;
  settings.counting = CountingMode::Uniform;
  settings.smoothing = 1.0;
  LocalProblem problem(data, settings, std::make_unique<SquashedFeatures>(data));
  SerialCommunicator serial;
  Recorder recorder;
  try {
    train(problem, config, serial, recorder);
    FAIL() << "trained a nonlinear model at eps = 0";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()),
              "tiny.h5: --epsilon 0: the squashed potential model is nonlinear and trains at "
              "eps > 0 only");
  }
}

std::vector<double> state_offset(const Dataset& data, uint64_t seed) {
  return testing::normal_theta(data.num_states(), 0.9, seed);
}

TEST(PotentialOffset, EntersFBeliefsAndTheDualAsBruteForceSays) {
  const Dataset data =
      testing::random_dataset({testing::tree_shape(), testing::chain_shape(4, 3)}, 5, 41);
  const std::vector<double> offset = state_offset(data, 6);
  const std::vector<double> theta = testing::normal_theta(5, 1.0, 7);
  LocalProblem problem(data, bethe(0.8));
  problem.set_potential_offset(offset);
  problem.set_theta(theta);
  sweep_to_convergence(problem);
  const LocalEvaluation local = problem.evaluate();

  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 0.8, 1.0, 0, 2, offset);
  EXPECT_NEAR(problem.objective() - problem.ground_truth_score(), exact.objective,
              1e-9 * std::abs(exact.objective));
  EXPECT_LT(max_abs_difference(problem.beliefs(), exact.marginals), 1e-9);
  std::vector<double> z(5);
  problem.model_moments(z);
  // At the exact beliefs of a tree, smax(u) = b . u + eps H(b): the dual terms carry the offset
  // as they carry the loss, and z . theta the rest.
  EXPECT_NEAR(local.objective, local.dual + dot(z, theta), 1e-9 * std::abs(local.objective));

  // No offset again: the exact F without it.
  problem.set_potential_offset({});
  problem.set_theta(theta);
  sweep_to_convergence(problem);
  EXPECT_NEAR(problem.objective() - problem.ground_truth_score(),
              testing::solve_exactly(data, theta, 0.8, 1.0, 0, 2).objective, 1e-9);
}

TEST(PotentialOffset, TrainingReachesTheExactOptimum) {
  const Dataset data =
      testing::random_dataset({testing::tree_shape(), testing::chain_shape(5)}, 4, 3);
  const std::vector<double> offset = state_offset(data, 9);
  const TrainConfig config = bethe_training(1000);
  LocalProblem problem(data, bethe(1.0));
  problem.set_potential_offset(offset);
  SerialCommunicator serial;
  Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);

  const testing::ExactSolution exact =
      testing::solve_exactly(data, result.state.theta, 1.0, 1.0, config.C, 2, offset);
  for (double g : exact.gradient) EXPECT_NEAR(g, 0.0, 1e-6);
  EXPECT_NEAR(result.objective, exact.objective, 1e-8 * std::abs(exact.objective));
}

// With positive counting numbers the dual at consistent beliefs bounds the optimum: with an
// offset it must carry the offset's terms (b . offset less its ground-truth part), or the gap
// would not close, or D would pass F.
TEST(PotentialOffset, TheCertifiedGapClosesAndDStaysBelowF) {
  const Dataset data =
      testing::random_dataset({testing::loopy_shape(), testing::tree_shape()}, 5, 14);
  TrainConfig config;
  config.epsilon = 1.0;
  config.counting = CountingMode::Uniform;
  config.sweeps = 5;
  config.max_iters = 2000;
  config.tol = 1e-7;
  ProblemSettings settings = bethe(1.0);
  settings.counting = CountingMode::Uniform;
  LocalProblem problem(data, settings);
  problem.set_potential_offset(state_offset(data, 4));
  SerialCommunicator serial;
  Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);
  EXPECT_EQ(result.stop.kind, StopKind::Converged) << result.stop.text;
  double lowest_f = INFINITY;
  for (const IterationRecord& r : recorder.records)
    lowest_f = std::min(lowest_f, r.objective_after_step);
  for (const IterationRecord& r : recorder.records) {
    if (r.gap_certified) {
      EXPECT_LE(r.dual, lowest_f + 1e-12 * std::abs(lowest_f)) << "iteration " << r.iteration;
    }
  }
  const IterationRecord& last = recorder.records.back();
  EXPECT_TRUE(last.gap_certified);
  EXPECT_GE(last.gap, 0.0);
  EXPECT_LT(last.gap, 1e-7 * std::abs(last.objective));
}

// Zero outside the positions of the listed examples.
std::vector<double> restricted(const Dataset& data, std::span<const double> values,
                               const std::vector<int64_t>& examples) {
  std::vector<double> out(values.size(), 0.0);
  const int64_t states = data.num_states();
  for (int64_t n : examples) {
    for (int64_t i = data.state_offset[data.var_offset[n]];
         i < data.state_offset[data.var_offset[n + 1]]; ++i)
      out[i] = values[i];
    for (int64_t t = data.table_offset[data.factor_offset[n]];
         t < data.table_offset[data.factor_offset[n + 1]]; ++t)
      out[states + t] = values[states + t];
  }
  return out;
}

TEST(ExampleSubsets, SweepsAndEvaluationsCoverTheSelectedExamplesOnly) {
  const Dataset data = testing::random_dataset({testing::tree_shape(), testing::chain_shape(4),
                                                testing::tree_shape(), testing::chain_shape(3, 3)},
                                               5, 19);
  const std::vector<double> theta = testing::normal_theta(5, 1.0, 2);
  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 1.0, 1.0, 0, 2);
  LocalProblem problem(data, bethe(1.0));
  problem.set_theta(theta);

  const std::vector<int64_t> first = {2, 0}, second = {3, 1};
  problem.select_examples(first);
  sweep_to_convergence(problem);
  const LocalEvaluation a = problem.evaluate();
  const double score_a = problem.ground_truth_score();
  std::vector<double> z(5), d(5);
  problem.model_moments(z);
  problem.ground_truth_moments(d);
  // Brute force's marginals and labelling of the selected examples, through the features.
  const FeatureIndex features(data);
  std::vector<double> z_exact(5);
  features.moments(restricted(data, exact.marginals, first), z_exact);
  problem.select_examples({});
  std::vector<double> d_all(5);
  problem.ground_truth_moments(d_all);
  EXPECT_LT(max_abs_difference(z, z_exact), 1e-9);
  EXPECT_LT(max_abs_difference(restricted(data, problem.beliefs(), first),
                               restricted(data, exact.marginals, first)),
            1e-9);

  problem.select_examples(second);
  sweep_to_convergence(problem);
  const LocalEvaluation b = problem.evaluate();
  const double score_b = problem.ground_truth_score();
  std::vector<double> d_second(5);
  problem.ground_truth_moments(d_second);
  // The two halves make the whole: F, and d.
  EXPECT_NEAR(a.objective - score_a + b.objective - score_b, exact.objective,
              1e-9 * std::abs(exact.objective));
  for (size_t r = 0; r < d.size(); ++r) EXPECT_NEAR(d[r] + d_second[r], d_all[r], 1e-12);
}

TEST(ExampleSubsets, TheirTermsSumToTheWholeWithSharedTables) {
  // Format 2 with a shared table type: the general kernels keep those factors' beliefs folded.
  const Dataset data = testing::random_compact_dataset(
      {testing::loopy_shape(), testing::tree_shape(), testing::chain_shape(4, 3)}, 13);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 0.7, 5);
  const std::vector<double> offset = state_offset(data, 1);
  LocalProblem whole(data, bethe(1.0));
  whole.set_potential_offset(offset);
  whole.set_theta(theta);
  whole.sweep(30);
  const LocalEvaluation all = whole.evaluate();
  std::vector<double> z_all(static_cast<size_t>(data.num_params));
  whole.model_moments(z_all);

  // The same sweeps from the same start, in two selections: the messages of an example do not
  // depend on the others, so each half's terms are those of the whole.
  LocalProblem halves(data, bethe(1.0));
  halves.set_potential_offset(offset);
  halves.set_theta(theta);
  LocalEvaluation sum;
  std::vector<double> z_sum(z_all.size(), 0.0), z(z_all.size());
  double score = 0;
  for (const std::vector<int64_t>& part : {std::vector<int64_t>{1}, std::vector<int64_t>{2, 0}}) {
    halves.select_examples(part);
    halves.sweep(30);
    const LocalEvaluation here = halves.evaluate();
    sum.objective += here.objective;
    sum.dual += here.dual;
    sum.expected_loss += here.expected_loss;
    halves.model_moments(z);
    for (size_t r = 0; r < z.size(); ++r) z_sum[r] += z[r];
    score += halves.ground_truth_score();
  }
  halves.select_examples({});
  const double tolerance = 1e-10 * std::max(1.0, std::abs(all.objective));
  EXPECT_NEAR(sum.objective, all.objective, tolerance);
  EXPECT_NEAR(sum.dual, all.dual, tolerance);
  EXPECT_NEAR(sum.expected_loss, all.expected_loss, tolerance);
  EXPECT_LT(max_abs_difference(z_sum, z_all), 1e-10);
  EXPECT_NEAR(score, whole.ground_truth_score(), 1e-10);
  EXPECT_EQ(halves.messages(), whole.messages());
}

TEST(ExampleSubsets, ThetaSetOnASelectionWritesItsExamplesAndReadsTheirOwnTables) {
  // A stochastic learner sets theta after selecting: only the selected examples' potentials are
  // written, and a shared table's representative (in example 0 here: the label pairs' tables
  // of multi-label data on the general kernels) is stale for a selection without it, so the
  // selection must read its own tables.
  const Dataset data = testing::multi_label_dataset(4);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 0.7, 5);
  ProblemSettings settings = testing::training_settings(1.0, CountingMode::Uniform);
  settings.specialised_kernels = false;
  LocalProblem whole(data, settings);
  whole.set_theta(theta);
  whole.sweep(30);
  const LocalEvaluation all = whole.evaluate();
  std::vector<double> z_all(static_cast<size_t>(data.num_params));
  whole.model_moments(z_all);

  LocalProblem parts(data, settings);
  parts.set_theta(testing::normal_theta(data.num_params, 0.7, 6));  // stale everywhere
  LocalEvaluation sum;
  std::vector<double> z_sum(z_all.size(), 0.0), z(z_all.size());
  for (const std::vector<int64_t>& part : {std::vector<int64_t>{1}, std::vector<int64_t>{3, 2}}) {
    parts.select_examples(part);
    parts.set_theta(theta);
    parts.sweep(30);
    const LocalEvaluation here = parts.evaluate(LocalProblem::FiniteCheck::Local);
    EXPECT_TRUE(here.finite);
    sum.objective += here.objective;
    sum.dual += here.dual;
    parts.model_moments(z);
    for (size_t r = 0; r < z.size(); ++r) z_sum[r] += z[r];
  }
  // Example 0 alone, as the whole problem computes it, completes the sums.
  parts.select_examples(std::vector<int64_t>{0});
  parts.set_theta(theta);
  parts.sweep(30);
  const LocalEvaluation first = parts.evaluate();
  sum.objective += first.objective;
  sum.dual += first.dual;
  parts.model_moments(z);
  for (size_t r = 0; r < z.size(); ++r) z_sum[r] += z[r];
  const double tolerance = 1e-10 * std::max(1.0, std::abs(all.objective));
  EXPECT_NEAR(sum.objective, all.objective, tolerance);
  EXPECT_NEAR(sum.dual, all.dual, tolerance);
  EXPECT_LT(max_abs_difference(z_sum, z_all), 1e-10);
}

TEST(ExampleSubsets, RepeatedOrOutOfRangeExamplesAreRefused) {
  const Dataset data =
      testing::random_dataset({testing::chain_shape(3), testing::chain_shape(3)}, 2, 1);
  LocalProblem problem(data, bethe(1.0));
  EXPECT_THROW(problem.select_examples(std::vector<int64_t>{0, 0}), std::invalid_argument);
  EXPECT_THROW(problem.select_examples(std::vector<int64_t>{2}), std::invalid_argument);
  EXPECT_TRUE(problem.selected_examples().empty());
  problem.select_examples(std::vector<int64_t>{1});
  std::vector<double> z(2);
  EXPECT_THROW(problem.consistent_beliefs(z), std::logic_error);
}

}  // namespace
}  // namespace pdsp
