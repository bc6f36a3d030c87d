// The function classes' potentials (function_class_model.hpp) on format 2 data with every kind of
// typed part: backward is the gradient of w . forward by finite differences; the per-example
// passes add up to the whole; the sums do not depend on the thread count; backward reuses the
// last forward pass only at its own point; nothing replaced is
// the linear model; the bound holds; and through LocalProblem at converged messages on trees
// (shared tables among the factors) the gradient of the exact F matches finite differences (also
// in one pass over beliefs less truth, on all or selected examples), and the trainer decreases F
// from the seeded start.
#include "pdsp/features/function_class_model.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/vector_ops.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;

Dataset compact_data() {
  return testing::random_compact_dataset(
      {testing::tree_shape(), testing::chain_shape(4, 3), testing::loopy_shape()}, 21);
}

// The same with columns on other scales and offsets (column j times 3 (j + 1), plus 2), as
// real observation rows have them.
Dataset badly_scaled_data() {
  Dataset data = compact_data();
  ObservationRows& obs = data.observations;
  for (size_t k = 0; k < obs.value.size(); ++k)
    obs.value[k] = 2.0 + 3.0 * (obs.index[k] + 1) * obs.value[k];
  return data;
}

int64_t positions(const Dataset& data) {
  return data.num_states() + data.num_table_entries();
}

// Networks on both kinds, reading standardized rows as training does unless `raw`.
FunctionClasses both_kinds(int hidden = 5, bool raw = false) {
  FunctionClasses settings;
  settings.unary = settings.pairwise = FunctionClass::Mlp;
  settings.hidden = hidden;
  settings.seed = 3;
  settings.standardize_inputs = !raw;
  return settings;
}

// w . f(theta) over every position.
double weighted_output(const PotentialModel& model, std::span<const double> theta,
                       std::span<const double> w) {
  std::vector<double> potential(w.size(), 0.0);
  model.forward(theta, {}, potential);
  return dot(potential, w);
}

TEST(FunctionClassModel, BackwardIsTheGradientOfTheWeightedOutput) {
  const Dataset data = badly_scaled_data();
  for (const bool raw : {false, true}) {
    const FunctionClassModel model(data, both_kinds(5, raw));
    EXPECT_GT(model.num_params(), data.num_params);
    std::vector<double> theta = model.initial_theta();
    const std::vector<double> noise = testing::normal_theta(model.num_params(), 0.3, 8);
    for (size_t r = 0; r < theta.size(); ++r) theta[r] += noise[r];
    const std::vector<double> w = testing::normal_theta(positions(data), 1.0, 9);
    std::vector<double> g(theta.size());
    model.backward(theta, w, g);
    for (size_t r = 0; r < theta.size(); ++r) {
      const double h = 1e-6;
      std::vector<double> up = theta, down = theta;
      up[r] += h;
      down[r] -= h;
      const double numeric =
          (weighted_output(model, up, w) - weighted_output(model, down, w)) / (2 * h);
      EXPECT_NEAR(g[r], numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
          << (raw ? "raw" : "standardized") << " inputs, parameter " << r;
    }
  }
}

// Standardized inputs change the coordinates, not the function class: the model file's theta
// on the raw rows gives the potentials theta gives on standardized ones (and other potentials
// than theta itself on raw rows, or the check could not fail); the data's parameters are
// stored as they are, the networks' U and b folded.
TEST(FunctionClassModel, StandardizedNetworksStoreTheSameFunctionOfTheRawRows) {
  const Dataset data = badly_scaled_data();
  const FunctionClassModel standardized(data, both_kinds());
  const FunctionClassModel raw(data, both_kinds(5, true));
  const std::vector<double> theta = testing::normal_theta(standardized.num_params(), 0.5, 13);
  const std::vector<double> stored = standardized.model_file_theta(theta);
  const std::vector<double> loss = testing::normal_theta(data.num_states(), 1.0, 14);
  std::vector<double> expected(static_cast<size_t>(positions(data))), folded(expected.size()),
      unfolded(expected.size());
  standardized.forward(theta, loss, expected);
  raw.forward(stored, loss, folded);
  raw.forward(theta, loss, unfolded);
  EXPECT_LT(max_abs_difference(expected, folded), 1e-12);
  EXPECT_GT(max_abs_difference(expected, unfolded), 1e-3);
  EXPECT_EQ(raw.model_file_theta(theta), theta);
  size_t changed = 0;
  for (size_t r = 0; r < theta.size(); ++r) changed += stored[r] != theta[r];
  EXPECT_EQ(std::vector<double>(stored.begin(), stored.begin() + data.num_params),
            std::vector<double>(theta.begin(), theta.begin() + data.num_params));
  EXPECT_GT(changed, size_t{10});
}

TEST(FunctionClassModel, ExamplePassesAddUpToTheWholeForAnyThreadCount) {
  const Dataset data = compact_data();
  const FunctionClassModel model(data, both_kinds());
  const std::vector<double> theta = testing::normal_theta(model.num_params(), 0.5, 4);
  const std::vector<double> w = testing::normal_theta(positions(data), 1.0, 5);
  const std::vector<double> loss = testing::normal_theta(data.num_states(), 1.0, 6);
  std::vector<double> whole(static_cast<size_t>(positions(data))), parts(whole.size());
  model.forward(theta, loss, whole);
  for (int64_t n = 0; n < data.num_examples(); ++n) model.forward_example(n, theta, loss, parts);
  EXPECT_LT(max_abs_difference(whole, parts), 1e-12);
  std::vector<double> z(theta.size()), z_parts(theta.size(), 0.0);
  model.backward(theta, w, z);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    model.add_backward_example(n, theta, w, z_parts);
  EXPECT_LT(max_abs_difference(z, z_parts), 1e-12);
  const int threads = omp_get_max_threads();
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    std::vector<double> again(theta.size());
    model.backward(theta, w, again);
    EXPECT_EQ(again, z) << t << " threads";
  }
  omp_set_num_threads(threads);
}

// The tables of skipped factors are left as they are (the general kernels read another
// factor's), and they add nothing to the gradient. Only factors without format 1 rows are
// skipped, as only those share tables.
TEST(FunctionClassModel, SkippedFactorsAreNeitherWrittenNorRead) {
  const Dataset data = compact_data();
  const FunctionClassModel model(data, both_kinds());
  const std::vector<double> theta = testing::normal_theta(model.num_params(), 0.5, 7);
  std::vector<uint8_t> skip(static_cast<size_t>(data.num_factors()), 0);
  const RowPointers& rows = data.factor_features.ptr;
  int64_t skipped = 0;
  for (int64_t a = 0; a < data.num_factors(); a += 2)
    if (rows[data.table_offset[a]] == rows[data.table_offset[a + 1]]) skipped += skip[a] = 1;
  ASSERT_GT(skipped, 0);
  std::vector<double> full(static_cast<size_t>(positions(data)), 0.0);
  std::vector<double> partial(full.size(), -7.0);
  model.forward(theta, {}, full);
  model.forward(theta, {}, partial, skip);
  const int64_t states = data.num_states();
  for (int64_t a = 0; a < data.num_factors(); ++a)
    for (int64_t t = data.table_offset[a]; t < data.table_offset[a + 1]; ++t)
      EXPECT_EQ(partial[states + t], skip[a] ? -7.0 : full[states + t]) << "factor " << a;
  std::vector<double> w = testing::normal_theta(positions(data), 1.0, 3);
  std::vector<double> z_skip(theta.size()), z_zeroed(theta.size());
  model.backward(theta, w, z_skip, skip);
  for (int64_t a = 0; a < data.num_factors(); ++a)
    if (skip[a])
      for (int64_t t = data.table_offset[a]; t < data.table_offset[a + 1]; ++t) w[states + t] = 0;
  model.backward(theta, w, z_zeroed);
  EXPECT_LT(max_abs_difference(z_skip, z_zeroed), 1e-12);
}

// backward reads the hidden layers of the last forward pass only when that pass was at the same
// networks and skipped factors; anywhere else it computes them, with the same result.
TEST(FunctionClassModel, BackwardReusesTheLastForwardPassOnlyAtItsOwnPoint) {
  const Dataset data = compact_data();
  const std::vector<double> theta =
      testing::normal_theta(FunctionClassModel(data, both_kinds()).num_params(), 0.5, 11);
  std::vector<double> other = theta;
  other[static_cast<size_t>(data.num_params)] += 0.25;  // the first network's U[0][0]
  std::vector<uint8_t> skip(static_cast<size_t>(data.num_factors()), 0);
  const RowPointers& rows = data.factor_features.ptr;
  for (int64_t a = 0; a < data.num_factors(); ++a)
    if (rows[data.table_offset[a]] == rows[data.table_offset[a + 1]]) skip[a] = 1;
  const std::vector<double> w = testing::normal_theta(positions(data), 1.0, 12);
  // On a new model: forward at `forward_at` (none if empty), then backward at theta.
  const auto gradient = [&](std::span<const double> forward_at,
                            std::span<const uint8_t> forward_skip,
                            std::span<const uint8_t> backward_skip) {
    const FunctionClassModel model(data, both_kinds());
    std::vector<double> potential(static_cast<size_t>(positions(data)), 0.0);
    if (!forward_at.empty()) model.forward(forward_at, {}, potential, forward_skip);
    std::vector<double> z(theta.size());
    model.backward(theta, w, z, backward_skip);
    return z;
  };
  const std::vector<double> computed = gradient({}, {}, {});
  const std::vector<double> computed_skip = gradient({}, {}, skip);
  EXPECT_GT(max_abs_difference(computed, computed_skip), 1e-6);
  EXPECT_EQ(gradient(theta, {}, {}), computed);
  EXPECT_EQ(gradient(other, {}, {}), computed);
  EXPECT_EQ(gradient(theta, skip, {}), computed);
  EXPECT_EQ(gradient(theta, skip, skip), computed_skip);
  EXPECT_EQ(gradient(theta, {}, skip), computed_skip);
}

TEST(FunctionClassModel, ReplacingNothingIsTheLinearModelAndTheBoundHolds) {
  const Dataset data = compact_data();
  const FunctionClassModel none(data, FunctionClasses{});
  EXPECT_EQ(none.num_params(), data.num_params);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 2);
  std::vector<double> mlp(static_cast<size_t>(positions(data))), linear(mlp.size());
  none.forward(theta, {}, mlp);
  FeatureIndex(data).forward(theta, {}, linear);
  EXPECT_EQ(mlp, linear);

  const FunctionClassModel model(data, both_kinds(7));
  const std::vector<double> big = testing::normal_theta(model.num_params(), 3.0, 1);
  std::vector<double> potential(mlp.size(), 0.0);
  model.forward(big, {}, potential);
  double largest = 0;
  for (double u : potential) largest = std::max(largest, std::abs(u));
  EXPECT_LE(largest, model.largest_term(big));
}

ProblemSettings bethe_at(double epsilon) {
  return testing::training_settings(epsilon, CountingMode::Bethe);
}

// F = sum smax - truth score at converged messages: on trees with Bethe numbers, the exact F.
double converged_f(LocalProblem& problem, std::span<const double> theta) {
  problem.set_theta(theta);
  for (int sweep = 0; sweep < 500 && problem.sweep(1) > 1e-14; ++sweep) {
  }
  return problem.objective() - problem.ground_truth_score();
}

TEST(FunctionClassModel, TheGradientOfTheExactObjectiveMatchesFiniteDifferencesWithSharedTables) {
  // Every factor reads one shared table type (dim 0), which the general kernels fold: its
  // network is a table of its own parameters, and the moments must come from the beliefs
  // written out, not from the table's sums.
  const Dataset data = testing::shared_table_dataset(
      {testing::tree_shape(), testing::chain_shape(4, 3), testing::tree_shape()}, 5);
  FunctionClasses settings = both_kinds(4);
  LocalProblem problem(data, bethe_at(0.8), std::make_unique<FunctionClassModel>(data, settings));
  ASSERT_FALSE(problem.model().is_linear());
  ASSERT_NE(problem.kernel_name().find("general"), std::string::npos);
  std::vector<double> theta = problem.model().initial_theta();
  const std::vector<double> noise = testing::normal_theta(problem.num_params(), 0.4, 2);
  for (size_t r = 0; r < theta.size(); ++r) theta[r] += noise[r];
  converged_f(problem, theta);
  problem.evaluate();
  std::vector<double> z(theta.size()), d(theta.size()), one_pass(theta.size());
  problem.model_moments(z);
  problem.ground_truth_moments(d);
  problem.moments_less_truth(one_pass);
  for (size_t r = 0; r < theta.size(); ++r) {
    EXPECT_NEAR(one_pass[r], z[r] - d[r], 1e-12 * std::max(1.0, std::abs(z[r])))
        << "parameter " << r;
    const double h = 1e-5;
    std::vector<double> up = theta, down = theta;
    up[r] += h;
    down[r] -= h;
    const double numeric = (converged_f(problem, up) - converged_f(problem, down)) / (2 * h);
    EXPECT_NEAR(z[r] - d[r], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << "parameter " << r;
  }
}

TEST(FunctionClassModel, OnePassOverBeliefsLessTruthIsTheTwoPassesOnSelectedExamplesToo) {
  const Dataset data = compact_data();
  LocalProblem problem(data, bethe_at(0.6),
                       std::make_unique<FunctionClassModel>(data, both_kinds()));
  std::vector<double> theta = problem.model().initial_theta();
  const std::vector<double> noise = testing::normal_theta(problem.num_params(), 0.5, 4);
  for (size_t r = 0; r < theta.size(); ++r) theta[r] += noise[r];
  for (const std::vector<int64_t>& examples :
       {std::vector<int64_t>{}, std::vector<int64_t>{2, 0}}) {
    problem.select_examples(examples);
    problem.set_theta(theta);
    problem.sweep(5);
    problem.evaluate();
    std::vector<double> z(theta.size()), d(theta.size()), one_pass(theta.size());
    problem.model_moments(z);
    problem.ground_truth_moments(d);
    problem.moments_less_truth(one_pass);
    double largest = 0.0;
    for (size_t r = 0; r < theta.size(); ++r) {
      EXPECT_NEAR(one_pass[r], z[r] - d[r], 1e-12 * std::max(1.0, std::abs(z[r])))
          << "parameter " << r << " of " << examples.size() << " selected examples";
      largest = std::max(largest, std::abs(one_pass[r]));
    }
    EXPECT_GT(largest, 1e-3);  // not a gradient that vanishes everywhere
  }
}

TEST(FunctionClassModel, TheTrainerDecreasesFFromTheSeededStart) {
  const Dataset data = testing::random_compact_dataset(
      {testing::tree_shape(), testing::chain_shape(5, 3), testing::loopy_shape()}, 17);
  TrainConfig config;
  config.epsilon = 0.5;
  config.max_iters = 60;
  config.tol = 0;
  LocalProblem problem(data, bethe_at(0.5),
                       std::make_unique<FunctionClassModel>(data, both_kinds()));
  SerialCommunicator serial;
  testing::Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);
  ASSERT_GE(recorder.records.size(), 2u);
  EXPECT_LT(result.objective, recorder.records.front().objective);
  EXPECT_NE(problem.model().initial_theta(),
            std::vector<double>(static_cast<size_t>(problem.num_params()), 0.0));
}

}  // namespace
}  // namespace pdsp
