// --counting trw: rho_a from a mixture of spanning forests. Checked against what any such
// mixture must satisfy (each forest spans: the rho sum to variables less components; bridges
// are in every forest), against Bethe's numbers on forests, and against enumeration: the
// tree-reweighted free energy bounds log Z from above, more tightly than uniform numbers.
#include "pdsp/inference/tree_reweighted.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "pdsp/inference/counting.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/errors.hpp"
#include "support/brute_force.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// A 3x3 grid with a pendant variable hung on its corner (the bridge 8-9), and a 4-cycle.
std::vector<testing::GraphShape> loopy_examples() {
  testing::GraphShape pendant = testing::grid_shape(3, 3);
  pendant.cards.push_back(2);
  pendant.factors.push_back({8, 9});
  testing::GraphShape cycle = testing::chain_shape(4);
  cycle.factors.push_back({3, 0});
  return {pendant, cycle};
}

TEST(EdgeAppearance, EachForestSpansAndHoldsEveryBridge) {
  const Dataset data = testing::random_dataset(loopy_examples(), 3, 2);
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    const std::vector<double> rho = edge_appearance(data, n, "tiny");
    const int64_t vars = data.var_offset[n + 1] - data.var_offset[n];
    EXPECT_NEAR(std::accumulate(rho.begin(), rho.end(), 0.0), static_cast<double>(vars - 1), 1e-12)
        << "example " << n;
    for (size_t a = 0; a < rho.size(); ++a) {
      EXPECT_GT(rho[a], 0.0) << "example " << n << " factor " << a;
      EXPECT_LT(rho[a], n == 0 && a + 1 == rho.size() ? 1.0 + 1e-15 : 1.0);
    }
  }
  EXPECT_EQ(edge_appearance(data, 0, "tiny").back(), 1.0);  // the bridge
}

TEST(EdgeAppearance, DependsOnTheExampleAndNotOnWhereTheSliceStarts) {
  const std::vector<testing::GraphShape> shapes = loopy_examples();
  const Dataset both = testing::random_dataset(shapes, 3, 2);
  Dataset second = testing::random_dataset({shapes[1]}, 3, 2);
  second.first_example = 1;  // the same example as the second of `both`, on another rank
  EXPECT_EQ(edge_appearance(second, 0, "tiny"), edge_appearance(both, 1, "tiny"));
  second.first_example = 0;
  EXPECT_NE(edge_appearance(second, 0, "tiny"), edge_appearance(both, 1, "tiny"));
}

TEST(TreeReweightedCounting, AreBethesNumbersOnAForestAndExactThere) {
  testing::GraphShape forest = testing::chain_shape(3);
  forest.cards.push_back(2);
  forest.cards.push_back(2);
  forest.factors.push_back({3, 4});
  const Dataset data = testing::random_dataset({forest, testing::grid_shape(2, 3)}, 3, 1);
  const FactorGraph graph(data);
  const CountingNumbers c = make_counting_numbers(data, graph, CountingMode::TreeReweighted, "x");
  EXPECT_EQ(c.exact, (std::vector<uint8_t>{1, 0}));
  for (int64_t v = 0; v < data.var_offset[1]; ++v)
    EXPECT_EQ(c.var[v], 1.0 - static_cast<double>(graph.degree(v)));
  // On the grid c_v = 1 - sum of its factors' rho, and chat_v = 1 as for every variable.
  for (int64_t v = data.var_offset[1]; v < data.num_vars(); ++v) {
    EXPECT_LT(c.var[v], 1.0);
    EXPECT_NEAR(c.block[v], 1.0, 1e-12);
  }
}

TEST(TreeReweightedCounting, RefuseFactorsOverMoreThanTwoVariables) {
  const Dataset data = testing::random_dataset({testing::tree_shape()}, 3, 1);
  try {
    make_counting_numbers(data, FactorGraph(data), CountingMode::TreeReweighted, "t.h5");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.h5: /factors/var_ptr["), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs pairwise factors"), std::string::npos);
  }
}

// sum of the smax terms at converged messages, eps = 1, no loss: the approximate log Z.
double free_energy(const Dataset& data, CountingMode counting, const std::vector<double>& theta) {
  LocalProblem problem(data, {1.0, counting, 0.0, false, "tiny"});
  problem.set_theta(theta);
  problem.sweep(3000);
  return problem.evaluate().objective;
}

TEST(TreeReweightedCounting, BoundLogZFromAboveMoreTightlyThanUniformNumbers) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Dataset data = testing::random_dataset({testing::grid_shape(3, 3, true)}, 4, seed);
    const std::vector<double> theta = testing::normal_theta(4, 1.5, seed);
    const double log_z = testing::solve_exactly(data, theta, 1.0, 0.0, 1.0, 2.0).smax_sum;
    const double trw = free_energy(data, CountingMode::TreeReweighted, theta);
    EXPECT_GE(trw, log_z - 1e-9) << "seed " << seed;
    EXPECT_LT(trw, free_energy(data, CountingMode::Uniform, theta)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace pdsp
