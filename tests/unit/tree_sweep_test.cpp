// Sweeps along the trees of acyclic examples with Bethe numbers (colour_variables' along_tree):
// the order of the one class, and one sweep from zero messages giving brute force's marginals
// and log-partition (colour classes need about half the longest path), for any thread count;
// the depth that decides which examples are swept so in training, and that inference at a fixed
// theta sweeps every tree so.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "pdsp/inference/colouring.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/brute_force.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// A binary spine of 18 variables with a leaf hanging from its 5th and its 12th: 20 variables,
// depth 17 from variable 0.
testing::GraphShape comb_shape() {
  testing::GraphShape shape = testing::chain_shape(18);
  shape.cards.insert(shape.cards.end(), {2, 2});
  shape.factors.push_back({4, 18});
  shape.factors.push_back({11, 19});
  return shape;
}

TEST(TreeSweep, OneClassUpAndDownEachTree) {
  const Dataset data = testing::random_dataset(
      {testing::loopy_shape(), testing::tree_shape(), testing::chain_shape(5)}, 6, 3);
  const std::vector<uint8_t> along_tree = {0, 1, 1};
  const Colouring colouring = colour_variables(data, FactorGraph(data), along_tree);
  EXPECT_GT(colouring.num_classes(0), 1);
  ASSERT_EQ(colouring.num_classes(1), 1);
  ASSERT_EQ(colouring.num_classes(2), 1);
  // The tree's breadth-first order from its variable 0 is 0 1 2 3 5 4 6; the chain's 0..4.
  std::vector<int64_t> tree, chain;
  for (int64_t v : colouring.members(colouring.example_class_ptr[1]))
    tree.push_back(v - data.var_offset[1]);
  for (int64_t v : colouring.members(colouring.example_class_ptr[2]))
    chain.push_back(v - data.var_offset[2]);
  EXPECT_EQ(tree, (std::vector<int64_t>{6, 4, 5, 3, 2, 1, 0, 0, 1, 2, 3, 5, 4, 6}));
  EXPECT_EQ(chain, (std::vector<int64_t>{4, 3, 2, 1, 0, 0, 1, 2, 3, 4}));
}

TEST(TreeSweep, DepthCountsLevelsBelowTheFirstVariable) {
  const Dataset data =
      testing::random_dataset({testing::chain_shape(5), testing::tree_shape(), comb_shape()}, 4, 1);
  const FactorGraph graph(data);
  EXPECT_EQ(tree_depth(data, graph, 0), 4);
  EXPECT_EQ(tree_depth(data, graph, 1), 3);
  EXPECT_EQ(tree_depth(data, graph, 2), 17);
}

TEST(TreeSweep, OneSweepGivesTheExactMarginals) {
  omp_set_num_threads(1);
  // Deep enough to be swept along their trees (LocalProblem: depth 16 and more).
  const Dataset data =
      testing::random_dataset({comb_shape(), testing::chain_shape(18), comb_shape()}, 8, 5);
  for (double epsilon : {1.0, 0.3}) {
    const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 11);
    const testing::ExactSolution exact = testing::solve_exactly(data, theta, epsilon, 1.0, 1, 2);
    for (CountingMode counting : {CountingMode::Bethe, CountingMode::Auto}) {
      LocalProblem problem(data, {epsilon, counting, 1.0, true, "trees"});
      problem.set_theta(theta);
      problem.sweep(1);
      const LocalEvaluation evaluation = problem.evaluate();
      for (int64_t i = 0; i < data.num_states(); ++i)
        EXPECT_NEAR(problem.beliefs()[i], exact.marginals[i], 1e-9) << "eps " << epsilon;
      EXPECT_LT(evaluation.violation, 1e-9);
      EXPECT_NEAR(evaluation.objective, exact.smax_sum, 1e-9);
    }
    // Two threads share these three examples class by class; the class along a tree stays one
    // chunk, so the messages are the same bitwise.
    std::vector<double> beliefs[2];
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      LocalProblem problem(data, {epsilon, CountingMode::Bethe, 1.0, true, "trees"});
      EXPECT_EQ(problem.threads_inside_examples(), threads == 2);
      problem.set_theta(theta);
      problem.sweep(1);
      problem.evaluate();
      beliefs[threads - 1].assign(problem.beliefs().begin(), problem.beliefs().end());
    }
    omp_set_num_threads(1);
    EXPECT_EQ(beliefs[0], beliefs[1]);
  }
}

TEST(TreeSweep, AtAFixedThetaShallowTreesAreSweptAlongThemToo) {
  omp_set_num_threads(1);
  // All too shallow for training's tree sweeps: one variable, a chain of 6, the 7-variable tree.
  const Dataset data = testing::random_dataset(
      {testing::chain_shape(1), testing::chain_shape(6, 3), testing::tree_shape()}, 8, 7);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 13);
  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 1.0, 1.0, 1, 2);
  for (bool shallow_too : {false, true}) {
    ProblemSettings settings{1.0, CountingMode::Bethe, 1.0, true, "shallow trees"};
    settings.shallow_trees_along = shallow_too;
    LocalProblem problem(data, settings);
    problem.set_theta(theta);
    problem.sweep(1);
    const LocalEvaluation evaluation = problem.evaluate();
    double worst = 0;
    for (int64_t i = 0; i < data.num_states(); ++i)
      worst = std::max(worst, std::abs(problem.beliefs()[i] - exact.marginals[i]));
    if (shallow_too) {
      EXPECT_LT(worst, 1e-9);
      EXPECT_NEAR(evaluation.objective, exact.smax_sum, 1e-9);
    } else {
      EXPECT_GT(worst, 1e-6) << "one sweep of colour classes carries a message one level";
    }
  }
}

// The step search's copy for a sweep (MessagesKept::ForASweep) leaves out the examples swept
// along their trees: after a sweep at another theta, a return and a sweep, those are exact again
// and the rest are where a full copy puts them, bitwise.
TEST(TreeSweep, ACopyForASweepRestoresTheExamplesOneSweepDoesNotMakeExact) {
  omp_set_num_threads(1);
  // A shallow chain (colour classes) between two deep ones (along their trees).
  const Dataset data = testing::random_dataset(
      {testing::chain_shape(18), testing::chain_shape(6, 3), comb_shape()}, 8, 9);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 17);
  const std::vector<double> elsewhere = testing::normal_theta(data.num_params, 2.0, 19);
  std::vector<double> messages[2];
  std::vector<double> beliefs[2];
  for (MessagesKept kept : {MessagesKept::All, MessagesKept::ForASweep}) {
    LocalProblem problem(data, {1.0, CountingMode::Bethe, 1.0, true, "chains"});
    problem.set_theta(theta);
    problem.sweep(2);
    problem.keep_messages(kept);
    problem.set_theta(elsewhere);
    problem.sweep(3);
    problem.set_theta(theta);
    problem.restore_messages();
    problem.sweep(1);
    problem.evaluate();
    const int i = kept == MessagesKept::All ? 0 : 1;
    messages[i] = problem.messages();
    beliefs[i].assign(problem.beliefs().begin(), problem.beliefs().end());
  }
  const FactorGraph graph(data);
  const auto arena_of = [&](int64_t n) {
    return std::pair{graph.message_offset(data.factor_var_ptr[data.factor_offset[n]]),
                     graph.message_offset(data.factor_var_ptr[data.factor_offset[n + 1]])};
  };
  const auto [shallow_begin, shallow_end] = arena_of(1);
  ASSERT_LT(shallow_begin, shallow_end);
  for (int64_t i = shallow_begin; i < shallow_end; ++i)
    ASSERT_EQ(messages[0][i], messages[1][i]) << "the shallow chain's message entry " << i;
  const auto [deep_begin, deep_end] = arena_of(0);
  double moved = 0;
  for (int64_t i = deep_begin; i < deep_end; ++i)
    moved = std::max(moved, std::abs(messages[0][i] - messages[1][i]));
  EXPECT_GT(moved, 0.0) << "the deep chain's messages were copied";
  for (size_t i = 0; i < beliefs[0].size(); ++i)
    EXPECT_NEAR(beliefs[0][i], beliefs[1][i], 1e-9) << "belief entry " << i;
}

}  // namespace
}  // namespace pdsp
