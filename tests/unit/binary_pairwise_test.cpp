// The specialised kernels for binary pairwise graphs, with messages in double and in single
// precision, against the general kernels, which the brute-force tests check: block updates,
// objective, beliefs and dual terms at random messages, whole training runs, and the
// applicability rule.
#include "pdsp/inference/binary_pairwise.hpp"

#include <gtest/gtest.h>

#include <random>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/parallel/communicator.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

struct Case {
  double epsilon;
  CountingMode counting;
  MessagePrecision precision = MessagePrecision::Double;
  bool single() const { return precision == MessagePrecision::Single; }
  // Agreement with the general kernels: round-off of double, or messages rounded to float
  // (relative 6e-8) at import and after each block update. Measured for single precision: 1.1e-7
  // on messages and beliefs, 1.1e-9 relative on F at random messages, 2e-10 relative on F, 7e-9
  // on D (first order in the beliefs, where F is second order in the messages) and 5e-9 on theta
  // over 15 training iterations; 6.5e-8 on theta over 10 iterations once the step search re-ran
  // the sweeps (in float) at every trial.
  double message_tolerance() const { return single() ? 1e-6 : 1e-11; }
  double relative_tolerance() const { return single() ? 1e-8 : 1e-11; }
  double trajectory_tolerance() const { return single() ? 2e-9 : 1e-9; }
  double dual_tolerance() const { return single() ? 5e-8 : 1e-9; }
  double theta_tolerance() const { return single() ? 2e-7 : 1e-8; }
};

std::string name(const ::testing::TestParamInfo<Case>& info) {
  return counting_mode_name(info.param.counting) + "_eps" +
         std::to_string(static_cast<int>(100 * info.param.epsilon)) +
         (info.param.single() ? "_single" : "");
}

std::unique_ptr<Kernels> binary_kernels(const Case& c, const Dataset& data,
                                        const FactorGraph& graph, const CountingNumbers& counting) {
  if (c.single())
    return std::make_unique<BinaryPairwiseKernels<float>>(data, graph, counting, c.epsilon);
  return std::make_unique<BinaryPairwiseKernels<double>>(data, graph, counting, c.epsilon);
}

// Grids only: under Bethe counting a variable of degree 1 would have c_v = 0, which the
// specialised kernels leave to the general ones.
Dataset grids() {
  Dataset data = testing::random_dataset(
      {testing::grid_shape(5, 6), testing::grid_shape(4, 4, true), testing::grid_shape(3, 9)}, 9,
      7);
  testing::set_random_counting(data, 0.2, 1.5, 3);
  return data;
}

// Both sets of kernels on one data set, with random potentials (loss included) and messages.
struct Both {
  explicit Both(const Case& c)
      : data(grids()),
        graph(data),
        counting(make_counting_numbers(data, graph, c.counting, "grids")),
        general(data, graph, counting, c.epsilon),
        binary(binary_kernels(c, data, graph, counting)),
        colouring(colour_variables(data, graph)),
        workspace(graph) {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> theta(static_cast<size_t>(data.num_params));
    for (double& t : theta) t = normal(rng);
    loss.resize(static_cast<size_t>(data.num_states()));
    for (double& l : loss) l = std::abs(normal(rng));
    potential.resize(static_cast<size_t>(data.num_states() + data.num_table_entries()));
    compute_potentials(data, theta, loss, potential);
    std::vector<double>& messages = std::get<std::vector<double>>(arena_state);
    messages.resize(static_cast<size_t>(graph.num_message_entries()));
    for (double& m : messages) m = normal(rng);  // not centred: only differences may matter
    state = binary->make_message_state();
    binary->import_messages(messages.data(), state);
  }
  const std::vector<double>& arena() const { return std::get<std::vector<double>>(arena_state); }
  std::vector<double> exported() const {
    std::vector<double> out(arena().size());
    binary->export_messages(state, out.data());
    return out;
  }
  // Updates every colour class of every example with both kernels; returns the largest change
  // each reported.
  std::pair<double, double> sweep() {
    double changes[2] = {0, 0};
    for (size_t c = 0; c + 1 < colouring.class_ptr.size(); ++c) {
      const auto members = colouring.members(static_cast<int64_t>(c));
      changes[0] = std::max(
          changes[0], general.update_variables(members, potential.data(), arena_state, workspace));
      changes[1] = std::max(changes[1],
                            binary->update_variables(members, potential.data(), state, workspace));
    }
    return {changes[0], changes[1]};
  }

  Dataset data;
  FactorGraph graph;
  CountingNumbers counting;
  MessagePassing general;
  std::unique_ptr<Kernels> binary;
  Colouring colouring;
  Workspace workspace;
  std::vector<double> loss, potential;
  MessageState arena_state;  // the general kernels' messages
  MessageState state;        // the binary kernels' messages
};

// Both passes of the beliefs over the whole data set, variables first (plan_evaluation).
BeliefTerms all_beliefs(const Kernels& kernels, const Dataset& data, const double* potential,
                        const MessageState& lambda, const double* loss, double* belief,
                        Workspace& w) {
  BeliefTerms terms =
      kernels.variable_beliefs(0, data.num_vars(), potential, lambda, loss, belief, w);
  terms.add(kernels.factor_beliefs(0, data.num_factors(), potential, lambda, belief, w));
  return terms;
}

class BinaryPairwiseTest : public ::testing::TestWithParam<Case> {};

TEST_P(BinaryPairwiseTest, AppliesToTheseGrids) {
  Both both(GetParam());
  EXPECT_TRUE(binary_pairwise_kernels_apply(both.data, both.counting, GetParam().epsilon));
}

TEST_P(BinaryPairwiseTest, BlockUpdatesEqualTheGeneralKernels) {
  const double tolerance = GetParam().message_tolerance();
  Both both(GetParam());
  both.sweep();  // from uncentred messages: the changes reported differ by the centring
  EXPECT_LT(testing::max_abs_difference(both.exported(), both.arena()), tolerance);
  const auto [general_change, binary_change] = both.sweep();
  EXPECT_LT(testing::max_abs_difference(both.exported(), both.arena()), tolerance);
  EXPECT_NEAR(general_change, binary_change, tolerance);
  EXPECT_GT(general_change, 1e-6);  // the second sweep still moved the messages
}

TEST_P(BinaryPairwiseTest, ObjectiveBeliefsAndDualTermsEqualTheGeneralKernels) {
  const double relative = GetParam().relative_tolerance();
  const double tolerance = GetParam().single() ? 1e-6 : 1e-13;  // beliefs, violation
  Both both(GetParam());
  EXPECT_EQ(std::holds_alternative<std::vector<float>>(both.state), GetParam().single());
  Workspace& w = both.workspace;
  const Dataset& data = both.data;
  const double* u = both.potential.data();
  const double F_general =
      both.general.factor_objective(0, data.num_factors(), u, both.arena_state, w) +
      both.general.variable_objective(0, data.num_vars(), u, both.arena_state, w);
  const double F_binary = both.binary->factor_objective(0, data.num_factors(), u, both.state, w) +
                          both.binary->variable_objective(0, data.num_vars(), u, both.state, w);
  EXPECT_NEAR(F_binary, F_general, relative * std::abs(F_general));

  std::vector<double> b_general(both.potential.size()), b_binary(both.potential.size());
  const BeliefTerms general =
      all_beliefs(both.general, data, u, both.arena_state, both.loss.data(), b_general.data(), w);
  const BeliefTerms binary =
      all_beliefs(*both.binary, data, u, both.state, both.loss.data(), b_binary.data(), w);
  EXPECT_LT(testing::max_abs_difference(b_binary, b_general), tolerance);
  EXPECT_NEAR(binary.objective, general.objective, relative * std::abs(general.objective));
  EXPECT_NEAR(binary.dual, general.dual, relative * std::abs(general.dual));
  EXPECT_NEAR(binary.violation, general.violation, tolerance);
  EXPECT_GT(general.violation, 1e-3);  // random messages: beliefs are not consistent
}

TEST_P(BinaryPairwiseTest, TrainingFollowsTheGeneralKernelsTrajectory) {
  const Case c = GetParam();
  const double relative = c.trajectory_tolerance();
  const Dataset data = grids();
  TrainConfig config;
  config.epsilon = c.epsilon;
  config.counting = c.counting;
  config.max_iters = 10;
  config.tol = 0;
  SerialCommunicator serial;
  std::vector<testing::Recorder> runs(2);
  std::vector<TrainResult> results;
  for (const bool specialised : {false, true}) {
    LocalProblem problem(data, {c.epsilon, c.counting, 1.0, true, "grids", specialised,
                                specialised ? c.precision : MessagePrecision::Double});
    EXPECT_EQ(problem.kernel_name().rfind(specialised ? "binary" : "general", 0), 0u);
    results.push_back(train(problem, config, serial, runs[specialised ? 1 : 0]));
  }
  ASSERT_EQ(runs[0].records.size(), runs[1].records.size());
  for (size_t i = 0; i < runs[0].records.size(); ++i) {
    const IterationRecord& g = runs[0].records[i];
    const IterationRecord& b = runs[1].records[i];
    EXPECT_NEAR(b.objective, g.objective, relative * std::abs(g.objective)) << "iteration " << i;
    EXPECT_NEAR(b.dual, g.dual, c.dual_tolerance() * std::abs(g.dual)) << "iteration " << i;
    // Once L-BFGS has F converged to round-off, the Armijo decisions are round-off too.
    if (g.objective - g.objective_after_step > 1e-12 * std::abs(g.objective)) {
      EXPECT_EQ(b.step_trials, g.step_trials) << "iteration " << i;
    }
  }
  EXPECT_LT(testing::max_abs_difference(results[0].state.theta, results[1].state.theta),
            c.theta_tolerance());
}

INSTANTIATE_TEST_SUITE_P(
    Counting, BinaryPairwiseTest,
    ::testing::Values(Case{1.0, CountingMode::Uniform}, Case{0.5, CountingMode::File},
                      Case{1.0, CountingMode::Bethe}, Case{2.0, CountingMode::File},
                      Case{1.0, CountingMode::Uniform, MessagePrecision::Single},
                      Case{0.5, CountingMode::File, MessagePrecision::Single},
                      Case{1.0, CountingMode::Bethe, MessagePrecision::Single},
                      // |z| past 708: the exps the floor keeps out of libmvec's fallback
                      Case{1e-3, CountingMode::Uniform}),
    name);

// Multi-label-like examples (complete graphs of binary labels), which the sweep plan bundles:
// LocalProblem's sweeps give exactly the messages of the kernels run class by class, example by
// example.
TEST(BinaryPairwise, BundledSweepsOfSmallExamplesEqualSweepsExampleByExample) {
  std::vector<testing::GraphShape> shapes;
  for (int n = 0; n < 30; ++n) {
    testing::GraphShape complete;
    complete.cards.assign(static_cast<size_t>(4 + n % 4), 2);
    for (int64_t i = 0; i < static_cast<int64_t>(complete.cards.size()); ++i)
      for (int64_t j = i + 1; j < static_cast<int64_t>(complete.cards.size()); ++j)
        complete.factors.push_back({i, j});
    shapes.push_back(complete);
  }
  const Dataset data = testing::random_dataset(shapes, 9, 4);
  std::mt19937_64 rng(6);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(static_cast<size_t>(data.num_params));
  for (double& t : theta) t = normal(rng);

  LocalProblem problem(data, {1.0, CountingMode::Uniform, 1.0, false, "complete graphs"});
  ASSERT_EQ(problem.kernel_name().rfind("binary", 0), 0u);
  problem.set_theta(theta);
  problem.sweep(3);

  const FactorGraph graph(data);
  const CountingNumbers counting =
      make_counting_numbers(data, graph, CountingMode::Uniform, "complete graphs");
  const BinaryPairwiseKernels<double> kernels(data, graph, counting, 1.0);
  std::vector<double> potential(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  compute_potentials(data, theta, {}, potential);
  const Colouring colouring = colour_variables(data, graph);
  MessageState state = kernels.make_message_state();
  Workspace workspace(graph);
  for (int sweep = 0; sweep < 3; ++sweep)
    for (int64_t c = 0; c + 1 < static_cast<int64_t>(colouring.class_ptr.size()); ++c)
      kernels.update_variables(colouring.members(c), potential.data(), state, workspace);
  std::vector<double> expected(static_cast<size_t>(graph.num_message_entries()));
  kernels.export_messages(state, expected.data());
  EXPECT_EQ(problem.messages(), expected);
}

// Label pairs that read their type's shared table (format 2) are updated through the type's
// representative: the messages and F of their expansion to rows, where each factor reads its
// own table.
TEST(BinaryPairwise, SharedTablesGiveTheMessagesOfOwnTables) {
  const Dataset data = testing::multi_label_dataset(40);
  const Dataset rows = testing::expand_to_rows(data);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(static_cast<size_t>(data.num_params));
  for (double& t : theta) t = normal(rng);
  std::vector<std::vector<double>> messages;
  std::vector<double> objective;
  for (const Dataset* d : {&data, &rows}) {
    LocalProblem problem(*d, {1.0, CountingMode::Uniform, 1.0, true, "labels"});
    ASSERT_EQ(problem.kernel_name().rfind("binary", 0), 0u);
    problem.set_theta(theta);
    problem.sweep(3);
    messages.push_back(problem.messages());
    objective.push_back(problem.evaluate().objective);
  }
  // The expansion sums the labels' potentials in another order: round-off apart.
  EXPECT_LT(testing::max_abs_difference(messages[0], messages[1]), 1e-12);
  EXPECT_NEAR(objective[0], objective[1], 1e-12 * std::abs(objective[1]));
}

TEST(BinaryPairwise, LeavesOtherProblemsToTheGeneralKernels) {
  const auto applies = [](const Dataset& data, CountingMode mode, double epsilon) {
    const FactorGraph graph(data);
    return binary_pairwise_kernels_apply(data, make_counting_numbers(data, graph, mode, "x"),
                                         epsilon);
  };
  const Dataset grid = testing::random_dataset({testing::grid_shape(3, 3)}, 3, 1);
  const Dataset chain = testing::random_dataset({testing::chain_shape(4)}, 3, 1);
  const Dataset mixed = testing::random_dataset({testing::loopy_shape()}, 3, 1);
  EXPECT_TRUE(applies(grid, CountingMode::Uniform, 1.0));
  EXPECT_FALSE(applies(grid, CountingMode::Uniform, 0.0));  // eps = 0: max, ties
  EXPECT_TRUE(applies(chain, CountingMode::Uniform, 1.0));
  EXPECT_FALSE(applies(chain, CountingMode::Bethe, 1.0));    // end points: c_v = 0
  EXPECT_FALSE(applies(mixed, CountingMode::Uniform, 1.0));  // ternary variables, arity 3
}

}  // namespace
}  // namespace pdsp
