// forest_map against enumeration: on acyclic examples (a factor tree with an arity-3 factor,
// chains of 3-state variables, a forest of two trees, an isolated variable and a unary factor)
// with random theta and a random state offset, its labelling is the unique maximiser the
// brute-force reference finds at eps = 0 (its own potentials, its own enumeration); and where
// pairwise factors share their type's table, the same labels read through the representatives
// with the other factors' tables never written.
#include "pdsp/inference/forest_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "support/brute_force.hpp"
#include "support/compact_data.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

testing::GraphShape forest_shape() {
  // Two trees (0-1-2 with a unary factor on 1; 3-4 and 3-5 by one arity-3 factor), variable 6
  // in no factor.
  return {{3, 2, 3, 2, 3, 2, 3}, {{0, 1}, {1}, {2, 1}, {3, 4, 5}}};
}

TEST(ForestMap, FindsTheMaximiserOfEnumerationOnAcyclicExamples) {
  const std::vector<testing::GraphShape> shapes = {testing::tree_shape(),
                                                   testing::chain_shape(6, 3), forest_shape(),
                                                   testing::chain_shape(1, 4)};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Dataset data = testing::random_dataset(shapes, 5, seed);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 2.0);
    std::vector<double> theta(5), offset(static_cast<size_t>(data.num_states()));
    for (double& x : theta) x = normal(rng);
    for (double& x : offset) x = normal(rng);
    std::vector<double> potential(
        static_cast<size_t>(data.num_states() + data.num_table_entries()));
    FeatureIndex(data).forward(theta, offset, potential);
    const FactorGraph graph(data);
    std::vector<int32_t> labels(static_cast<size_t>(data.num_vars()), -1);
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      ASSERT_TRUE(is_acyclic(data, n)) << "example " << n;
      forest_map(data, graph, n, potential, labels);
    }
    // eps = 0: the reference's marginals are uniform over the maximisers; with continuous
    // random potentials there is one, so each variable's marginal is 1 at its label.
    const testing::ExactSolution exact =
        testing::solve_exactly(data, theta, 0.0, 0.0, 1.0, 2.0, offset);
    for (int64_t v = 0; v < data.num_vars(); ++v) {
      ASSERT_GE(labels[v], 0) << "variable " << v << " not labelled";
      EXPECT_DOUBLE_EQ(exact.marginals[data.state_offset[v] + labels[v]], 1.0)
          << "seed " << seed << ", variable " << v;
    }
  }
}

TEST(ForestMap, ReadsSharedTablesAtTheirRepresentatives) {
  // Chains and trees whose pairwise factors share one table per shape, as OCR's transitions.
  testing::GraphShape four_states = testing::chain_shape(5);
  four_states.cards.assign(5, 4);
  const Dataset data = testing::shared_table_dataset(
      {four_states, testing::tree_shape(), testing::chain_shape(4), four_states}, 3);
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Bethe, "tiny");
  const MessagePassing kernels(data, graph, counting, 1.0);
  const SharedPairwiseTables& shared = kernels.shared_tables();
  ASSERT_GT(std::count(shared.others().begin(), shared.others().end(), 1), 0);
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 2.0);
    std::vector<double> theta(static_cast<size_t>(data.num_params));
    for (double& x : theta) x = normal(rng);
    const size_t size = static_cast<size_t>(data.num_states() + data.num_table_entries());
    std::vector<double> full(size), skipped(size, NAN);
    FeatureIndex(data).forward(theta, {}, full);
    FeatureIndex(data).forward(theta, {}, skipped, shared.others());
    std::vector<int32_t> expected(static_cast<size_t>(data.num_vars()), -1), actual = expected;
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      forest_map(data, graph, n, full, expected);
      forest_map(data, graph, n, skipped, actual, &shared);
    }
    EXPECT_EQ(actual, expected) << "seed " << seed;
  }
}

}  // namespace
}  // namespace pdsp
