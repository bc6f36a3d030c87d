// Boosted trees as a function class (features/tree_ensemble.hpp, tree_functions.hpp,
// learning/tree_fits.hpp): an ensemble's margins are the sum of its trees whether taken round by
// round, at once, or after a round trip through the stored form; every leaf holds at least min_leaf
// of the rows; a subsampled round splits on its drawn rows only; a least-squares round fits a step
// exactly; F at fixed messages is the sum of the regions' logistic losses with the messages as base
// margins, as XGBoost's own loss computes it; and each leaf value that a round fits minimises F
// along that leaf's potentials, found again by a golden-section search on F itself; and a step
// round (the primal-dual learner's) descends F at its derivative and scales to what a reload
// computes.
#include "pdsp/learning/tree_fits.hpp"

#include <gtest/gtest.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "pdsp/features/function_class_model.hpp"
#include "pdsp/features/tree_ensemble.hpp"
#include "pdsp/gen/domke.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

// Rows of two uniform features, and a gradient for two outputs.
struct Rows {
  int64_t rows = 400;
  int dim = 2;
  std::vector<float> features;
  std::vector<float> gradient, weight;
};

Rows random_rows(uint64_t seed) {
  Rows r;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int64_t i = 0; i < r.rows * r.dim; ++i) r.features.push_back(unit(rng));
  for (int64_t i = 0; i < r.rows; ++i) {
    const float x = r.features[i * r.dim], y = r.features[i * r.dim + 1];
    r.gradient.push_back(x > 0.5f ? 0.7f : -0.3f);
    r.gradient.push_back(std::sin(6.0f * y) + 0.1f * unit(rng));
  }
  r.weight.assign(r.gradient.size(), 1.0f);
  return r;
}

// The least-squares leaf: minus the mean gradient of its rows at that output.
LeafFit mean_fit(const Rows& r, int outputs, std::vector<size_t>* leaf_sizes = nullptr) {
  return [&r, outputs, leaf_sizes](int k, std::span<const int64_t> rows) {
    if (leaf_sizes) leaf_sizes->push_back(rows.size());
    double sum = 0;
    for (int64_t row : rows) sum += r.gradient[row * outputs + k];
    return -sum / static_cast<double>(rows.size());
  };
}

TEST(TreeEnsemble, MarginsAreTheSumOfTheTreesHoweverTakenAndSurviveStorage) {
  const Rows r = random_rows(3);
  const TreeRows rows(r.features, r.rows, r.dim);
  TreeEnsemble trees(2, r.dim, {0.25, 0.05});
  std::vector<size_t> leaf_sizes;
  std::vector<double> margin(static_cast<size_t>(r.rows * 2), 0.0);
  for (int round = 0; round < 3; ++round)
    trees.add_round(rows, r.gradient, r.weight, mean_fit(r, 2, &leaf_sizes), margin);
  EXPECT_EQ(trees.rounds(), 3);
  for (size_t size : leaf_sizes) EXPECT_GE(size, 20u);  // 5% of 400 rows
  EXPECT_GT(leaf_sizes.size(), 6u);                     // the trees split

  std::vector<double> at_once(margin.size(), 0.0);
  trees.add_margins(rows, 0, at_once);
  EXPECT_EQ(at_once, margin);
  std::vector<double> from_second(margin.size(), 0.0);
  trees.add_margins(rows, 1, from_second);
  double largest = 0;
  for (size_t i = 0; i < margin.size(); ++i) {
    EXPECT_NE(from_second[i], margin[i]);  // the first round is left out
    largest = std::max(largest, std::abs(margin[i]));
  }
  EXPECT_LE(largest, trees.largest_term());

  const StoredEnsemble stored = trees.stored("variables", 0);
  EXPECT_EQ(stored.trees(), 6);
  const TreeEnsemble loaded(stored, r.dim, {0.25, 0.05}, "stored.h5");
  std::vector<double> again(margin.size(), 0.0);
  loaded.add_margins(rows, 0, again);
  EXPECT_EQ(again, margin);

  StoredEnsemble broken = stored;
  broken.booster = "{not a model";
  EXPECT_THROW(TreeEnsemble(broken, r.dim, {0.25, 0.05}, "broken.h5"), InputError);
}

TEST(TreeEnsemble, ALeastSquaresRoundFitsAStepExactly) {
  // Output 0's gradient is a step in the first feature: one split reproduces it, so one round
  // at shrinkage 1 with mean leaves gives margins of exactly minus the gradient.
  Rows r = random_rows(5);
  for (int64_t i = 0; i < r.rows; ++i) r.weight[i * 2 + 1] = 0.0f;  // output 1 is padding
  const TreeRows rows(r.features, r.rows, r.dim);
  TreeEnsemble trees(2, r.dim, {1.0, 0.05});
  std::vector<double> margin(static_cast<size_t>(r.rows * 2), 0.0);
  trees.add_round(rows, r.gradient, r.weight, mean_fit(r, 2), margin);
  for (int64_t i = 0; i < r.rows; ++i)
    EXPECT_NEAR(margin[i * 2], -r.gradient[i * 2], 1e-6) << "row " << i;
}

TEST(TreeEnsemble, ASubsampledRoundSplitsOnTheDrawnRowsAndFitsEveryRowOfALeaf) {
  const Rows r = random_rows(7);
  const TreeRows rows(r.features, r.rows, r.dim);
  const TreeSettings half{.shrinkage = 0.25, .min_leaf = 0.05, .subsample = 0.5, .seed = 3};
  TreeEnsemble trees(2, r.dim, half);
  const std::vector<float> drawn = trees.drawn_rows(r.rows, 0);
  const auto count = std::count(drawn.begin(), drawn.end(), 1.0f);
  EXPECT_GT(count, 160);  // 200 expected, standard deviation 10
  EXPECT_LT(count, 240);
  EXPECT_NE(trees.drawn_rows(r.rows, 1), drawn);  // each round draws afresh
  EXPECT_NE(TreeEnsemble(2, r.dim, {0.25, 0.05, 0.5, 4}).drawn_rows(r.rows, 0), drawn);

  // Gradients that differ only on rows not drawn grow the same trees: the splits see the
  // drawn rows only. The leaves' fits get every row (each tree's leaves hold all 400).
  Rows noisy = r;
  std::mt19937_64 rng(11);
  for (int64_t i = 0; i < r.rows; ++i)
    if (drawn[i] == 0.0f)
      for (int k = 0; k < 2; ++k) noisy.gradient[i * 2 + k] = static_cast<float>(rng() % 7) - 3.0f;
  std::vector<size_t> leaf_sizes;
  std::vector<double> margin(static_cast<size_t>(r.rows * 2), 0.0);
  trees.add_round(rows, r.gradient, r.weight, mean_fit(r, 2, &leaf_sizes), margin);
  TreeEnsemble again(2, r.dim, half);
  std::vector<double> noisy_margin(margin.size(), 0.0);
  again.add_round(rows, noisy.gradient, noisy.weight, mean_fit(r, 2), noisy_margin);
  EXPECT_EQ(noisy_margin, margin);
  size_t fitted = 0;
  for (size_t size : leaf_sizes) fitted += size;
  EXPECT_EQ(fitted, 2u * 400u);  // two trees, every row in one leaf of each
  EXPECT_GT(leaf_sizes.size(), 6u);

  // The leaf size counts the drawn rows: each leaf holds 5% of those, and the smallest fewer
  // than 5% of all rows.
  std::vector<int64_t> drawn_in_leaf;
  TreeEnsemble counted(2, r.dim, half);
  counted.add_round(
      rows, r.gradient, r.weight,
      [&](int, std::span<const int64_t> members) {
        int64_t in = 0;
        for (int64_t row : members) in += drawn[row] == 1.0f;
        drawn_in_leaf.push_back(in);
        return 0.0;
      },
      noisy_margin);
  const int64_t smallest = *std::min_element(drawn_in_leaf.begin(), drawn_in_leaf.end());
  EXPECT_GE(static_cast<double>(smallest), 0.05 * static_cast<double>(count));
  EXPECT_LT(smallest, 20);

  // Without the subsample the noisy rows move the splits.
  TreeEnsemble all(2, r.dim, {0.25, 0.05}), all_noisy(2, r.dim, {0.25, 0.05});
  std::vector<double> plain(margin.size(), 0.0), plain_noisy(margin.size(), 0.0);
  all.add_round(rows, r.gradient, r.weight, mean_fit(r, 2), plain);
  all_noisy.add_round(rows, noisy.gradient, noisy.weight, mean_fit(r, 2), plain_noisy);
  EXPECT_NE(plain_noisy, plain);
}

// A tiny denoising problem with trees for the variables and linear factors, its messages swept.
struct TinyProblem {
  Dataset data;
  std::unique_ptr<LocalProblem> problem;
  std::vector<double> theta;
};

TinyProblem tiny_problem(double epsilon, double shrinkage, bool loss,
                         CountingMode counting = CountingMode::Uniform) {
  TinyProblem t;
  t.data = generate_domke({.height = 6, .width = 5, .images = 2, .blur = 1.5, .seed = 4});
  FunctionClasses classes;
  classes.unary = FunctionClass::Trees;
  classes.trees = {shrinkage, 0.05};
  ProblemSettings settings = testing::training_settings(epsilon, counting);
  settings.loss_augmented = loss;
  t.problem = std::make_unique<LocalProblem>(t.data, settings,
                                             std::make_unique<FunctionClassModel>(t.data, classes));
  t.theta.assign(static_cast<size_t>(t.problem->num_params()), 0.0);
  for (size_t r = 4; r < t.theta.size(); ++r) t.theta[r] = 0.3 * static_cast<double>(r % 3) - 0.2;
  t.problem->set_theta(t.theta);
  t.problem->sweep(7);
  return t;
}

double f_at_messages(LocalProblem& problem, std::span<const double> theta) {
  problem.set_theta(theta);
  return problem.objective() - problem.ground_truth_score();
}

// XGBoost's mean multi-class log loss of `rows` regions with `outputs` states whose margins are
// the log beliefs (the potentials biased by the messages, up to a constant per row).
double xgboost_log_loss(const std::vector<float>& margins, const std::vector<float>& labels,
                        int outputs) {
  const auto rows = static_cast<bst_ulong>(labels.size());
  const std::vector<float> features(rows, 0.0f);
  DMatrixHandle matrix = nullptr;
  EXPECT_EQ(XGDMatrixCreateFromMat(features.data(), rows, 1, NAN, &matrix), 0);
  EXPECT_EQ(XGDMatrixSetFloatInfo(matrix, "label", labels.data(), rows), 0);
  EXPECT_EQ(XGDMatrixSetFloatInfo(matrix, "base_margin", margins.data(), margins.size()), 0);
  BoosterHandle booster = nullptr;
  EXPECT_EQ(XGBoosterCreate(&matrix, 1, &booster), 0);
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"objective", "multi:softprob"},
        {"num_class", std::to_string(outputs)},
        {"eval_metric", "mlogloss"},
        {"verbosity", "0"}})
    EXPECT_EQ(XGBoosterSetParam(booster, name, value.c_str()), 0);
  const char* names[] = {"data"};
  const char* result = nullptr;
  EXPECT_EQ(XGBoosterEvalOneIter(booster, 0, &matrix, names, 1, &result), 0) << XGBGetLastError();
  const std::string text = result;  // "[0]\tdata-mlogloss:0.693147"
  XGBoosterFree(booster);
  XGDMatrixFree(matrix);
  return std::stod(text.substr(text.find(':') + 1));
}

TEST(TreeFits, FAtFixedMessagesIsXgboostsLogisticLossWithTheMessagesAsBaseMargins) {
  // At eps = 1 and c = 1 every region's term is -log b(y): the messages cancel in the sum over
  // regions at the labelled states, and F is the regions' logistic losses.
  TinyProblem t = tiny_problem(1.0, 0.25, false);
  LocalProblem& problem = *t.problem;
  const double f = f_at_messages(problem, t.theta);
  problem.evaluate();
  const Dataset& data = t.data;
  std::vector<float> var_margin, var_label, factor_margin, factor_label;
  for (int64_t v = 0; v < data.owned_vars(); ++v) {
    for (int s = 0; s < 2; ++s)
      var_margin.push_back(
          static_cast<float>(std::log(problem.beliefs()[data.state_offset[v] + s])));
    var_label.push_back(static_cast<float>(data.label[v]));
  }
  const std::span<const double> truth = problem.ground_truth_indicator();
  for (int64_t a = 0; a < data.owned_factors(); ++a) {
    const int64_t first = data.num_states() + data.table_offset[a];
    for (int e = 0; e < 4; ++e) {
      factor_margin.push_back(static_cast<float>(std::log(problem.beliefs()[first + e])));
      if (truth[first + e] != 0) factor_label.push_back(static_cast<float>(e));
    }
  }
  ASSERT_EQ(factor_label.size(), static_cast<size_t>(data.owned_factors()));
  const double xgboost =
      static_cast<double>(var_label.size()) * xgboost_log_loss(var_margin, var_label, 2) +
      static_cast<double>(factor_label.size()) * xgboost_log_loss(factor_margin, factor_label, 4);
  EXPECT_NEAR(xgboost, f, 2e-5 * std::abs(f)) << "F " << f << ", XGBoost " << xgboost;
}

// Golden-section minimum of a convex function of one variable on [low, high].
template <class Function>
double golden_minimum(Function&& f, double low, double high) {
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = low, b = high;
  double c = b - ratio * (b - a), d = a + ratio * (b - a);
  double fc = f(c), fd = f(d);
  while (b - a > 1e-10) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - ratio * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd, d = a + ratio * (b - a), fd = f(d);
    }
  }
  return 0.5 * (a + b);
}

TEST(TreeFits, EachLeafValueMinimisesFAlongItsPotentialsAtFixedMessages) {
  const double C = 0.1;
  for (const double epsilon : {0.5, 0.1}) {
    // One round at shrinkage 1 on a problem whose messages are then kept: each leaf's value.
    TinyProblem boosted = tiny_problem(epsilon, 1.0, true);
    const std::vector<double> messages = boosted.problem->messages();
    TreeFunctions& trees = *boosted.problem->model().tree_functions();
    SerialCommunicator serial;
    TreeFits fits(*boosted.problem, trees, serial);
    fits.boost(*boosted.problem, boosted.theta, PotentialModel::kVariableParameter, 1, C);
    const TreeFunctions::Ensemble& ens = trees.ensembles()[0];
    ASSERT_EQ(ens.trees->rounds(), 1);

    // The same problem without trees at the same messages: F along each leaf's potentials,
    // moved by a potential offset at that output of the leaf's variables.
    TinyProblem fresh = tiny_problem(epsilon, 1.0, true);
    fresh.problem->set_messages(messages);
    const int64_t states = fresh.data.num_states();
    int leaves = 0;
    for (int k = 0; k < 2; ++k) {
      std::map<double, std::vector<int64_t>> leaf_of_value;  // a leaf's value -> its variables
      for (size_t row = 0; row < ens.regions.size(); ++row)
        leaf_of_value[ens.margin[row * 2 + k]].push_back(trees.regions()[ens.regions[row]].local);
      for (const auto& [value, variables] : leaf_of_value) {
        const auto f_along = [&](double delta) {
          std::vector<double> offset(static_cast<size_t>(states), 0.0);
          for (int64_t v : variables) offset[fresh.data.state_offset[v] + k] = delta;
          fresh.problem->set_potential_offset(offset);
          return f_at_messages(*fresh.problem, fresh.theta) + 0.5 * C * delta * delta;
        };
        const double best = golden_minimum(f_along, -30.0, 30.0);
        EXPECT_NEAR(value, best, 1e-6) << "eps " << epsilon << ", output " << k << ", a leaf of "
                                       << variables.size() << " variables";
        ++leaves;
      }
    }
    EXPECT_GE(leaves, 4) << "eps " << epsilon;
  }
}

TEST(TreeFits, AStepRoundPointsDownFAndScalesToWhatAReloadComputes) {
  // Bethe's numbers make the grid's c_v negative: the primal-dual learner's saddle case.
  for (const CountingMode counting : {CountingMode::Uniform, CountingMode::Bethe}) {
    TinyProblem t = tiny_problem(0.1, 0.25, false, counting);
    LocalProblem& problem = *t.problem;
    TreeFunctions& trees = *problem.model().tree_functions();
    SerialCommunicator serial;
    TreeFits fits(problem, trees, serial);
    problem.set_theta(t.theta);
    problem.evaluate();
    const double slope = fits.add_step_round(problem, 0.1);
    EXPECT_LT(slope, 0.0);
    // The derivative along the round's trees at fixed messages, by central differences.
    const double h = std::ldexp(1.0, -16);
    fits.scale_step(h);
    const double ahead = f_at_messages(problem, t.theta);
    fits.scale_step(-1.0);
    const double behind = f_at_messages(problem, t.theta);
    EXPECT_NEAR((ahead - behind) / (2 * h), slope, 1e-6 * std::abs(slope));

    // At a power of two the margins are those the stored trees give when loaded again.
    fits.scale_step(-1.0 / h * 0.5);
    const std::vector<double> scaled = trees.ensembles()[0].margin;
    trees.load(trees.stored(), "the scaled trees");
    EXPECT_EQ(trees.ensembles()[0].margin, scaled);
    // At 0 the round adds nothing.
    const double half = f_at_messages(problem, t.theta);
    fits.scale_step(0.0);
    std::vector<double> without(scaled.size(), 0.0);
    EXPECT_EQ(trees.ensembles()[0].margin, without);
    EXPECT_LT(half, f_at_messages(problem, t.theta));
  }
}

TEST(TreeFits, ThePrimalDualLearnerAlternatesTreeAndThetaStepsThatLowerF) {
  // Trees for the variables, linear factors: odd iterations grow a round, even ones move theta.
  TinyProblem t = tiny_problem(0.5, 0.25, false);
  TrainConfig config;
  config.epsilon = 0.5;
  config.max_iters = 10;
  config.tol = 0;
  SerialCommunicator serial;
  testing::Recorder recorder;
  const TrainResult result = train(*t.problem, config, serial, recorder);
  ASSERT_EQ(recorder.records.size(), 10u);
  for (const IterationRecord& record : recorder.records) {
    EXPECT_EQ(record.direction == "trees", record.iteration % 2 == 1) << record.iteration;
    EXPECT_LE(record.objective_after_step, record.objective) << record.iteration;
  }
  EXPECT_EQ(t.problem->model().tree_functions()->ensembles()[0].trees->rounds(), 5);
  EXPECT_EQ(result.state.trees.size(), 1u);
  EXPECT_LT(result.objective, 0.8 * recorder.records.front().objective);
}

}  // namespace
}  // namespace pdsp
