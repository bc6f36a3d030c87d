// The exact LP oracle of the structured SVM learner on binary pairwise examples: the minimum cut
// against every cut of small random graphs, the roof dual against every half-integral point of
// the local polytope (which holds all its vertices), and the vertices' beliefs in the polytope.
#include "pdsp/inference/binary_lp.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <stdexcept>

#include "pdsp/inference/min_cut.hpp"
#include "pdsp/inference/small_min_cut.hpp"
#include "pdsp/util/errors.hpp"
#include "support/compact_data.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Both cuts, the arc lists' and the bit masks' (small graphs), against brute force.
template <class Cut>
class EveryMinCut : public ::testing::Test {};
using MinCuts = ::testing::Types<MinCut, SmallMinCut>;
TYPED_TEST_SUITE(EveryMinCut, MinCuts);

TYPED_TEST(EveryMinCut, FlowEqualsTheCheapestOfEveryCut) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> capacity(0.0, 3.0);
  for (int trial = 0; trial < 40; ++trial) {
    const int nodes = 5;
    std::vector<std::tuple<int, int, double>> arcs;
    TypeParam cut;
    cut.reset(nodes);
    const int all = nodes + 2;
    for (int from = 0; from < all; ++from)
      for (int to = 0; to < all; ++to)
        if (from != to && rng() % 3 != 0) {
          const double c = rng() % 4 == 0 ? 0.0 : capacity(rng);
          arcs.emplace_back(from, to, c);
          cut.add_arc(from, to, c);
        }
    const double flow = cut.solve();
    // Every set S of the inner nodes on the source's side, by brute force.
    double cheapest = INFINITY;
    const auto cost = [&](auto on_source) {
      double sum = 0;
      for (const auto& [from, to, c] : arcs)
        if (on_source(from) && !on_source(to)) sum += c;
      return sum;
    };
    for (int mask = 0; mask < (1 << nodes); ++mask)
      cheapest = std::min(cheapest, cost([&](int v) {
                            return v == cut.source() || (v < nodes && ((mask >> v) & 1));
                          }));
    EXPECT_NEAR(flow, cheapest, 1e-12 * (1 + cheapest));
    // The reported side is a cut of that capacity.
    EXPECT_NEAR(cost([&](int v) { return v != cut.sink() && cut.on_source_side(v); }), cheapest,
                1e-12 * (1 + cheapest));
  }
}

// Graphs up to the small cut's limit, sparse and dense, with parallel arcs (which it merges):
// the same flow and the same source side (the nodes every maximum flow leaves reachable).
TEST(SmallMinCut, AgreesWithTheArcListCutUpToItsLimit) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> capacity(0.0, 2.0);
  for (int nodes : {1, 8, 20, 40, SmallMinCut::kMaxNodes}) {
    for (int density : {10, 50, 100}) {
      MinCut list;
      SmallMinCut small;
      list.reset(nodes);
      small.reset(nodes);
      const int all = nodes + 2;
      for (int from = 0; from < all; ++from)
        for (int to = 0; to < all; ++to)
          for (int copy = 0; copy < 2; ++copy)
            if (from != to && static_cast<int>(rng() % 100) < density / (copy + 1)) {
              const double c = capacity(rng);
              list.add_arc(from, to, c);
              small.add_arc(from, to, c);
            }
      const double flow = list.solve();
      EXPECT_NEAR(small.solve(), flow, 1e-12 * (1 + flow)) << nodes << " nodes, " << density;
      for (int v = 0; v < all; ++v)
        EXPECT_EQ(small.on_source_side(v), list.on_source_side(v))
            << nodes << " nodes, density " << density << ", node " << v;
    }
  }
  SmallMinCut small;
  EXPECT_THROW(small.reset(SmallMinCut::kMaxNodes + 1), std::invalid_argument);
}

// Random potentials over every position of `data` (non-submodular tables included).
std::vector<double> random_potentials(const Dataset& data, double scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<double> u(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  for (double& x : u) x = normal(rng);
  return u;
}

// Every vertex of example n's local polytope, through the vertex form itself.
double best_half_integral_score(const Dataset& data, int64_t n, const std::vector<double>& u) {
  const int64_t vars = data.var_offset[n + 1] - data.var_offset[n];
  const int64_t factors = data.factor_offset[n + 1] - data.factor_offset[n];
  HalfIntegralVertex v{std::vector<uint8_t>(static_cast<size_t>(vars), 0),
                       std::vector<uint8_t>(static_cast<size_t>(factors), 0)};
  double best = -INFINITY;
  while (true) {
    for (int64_t mask = 0; mask < (int64_t{1} << factors); ++mask) {
      bool canonical = true;
      for (int64_t a = 0; a < factors; ++a) {
        v.top[a] = static_cast<uint8_t>((mask >> a) & 1);
        const int64_t i = data.factor_vars[data.factor_var_ptr[data.factor_offset[n] + a]];
        const int64_t j = data.factor_vars[data.factor_var_ptr[data.factor_offset[n] + a] + 1];
        const bool both_half =
            v.level[i - data.var_offset[n]] == 1 && v.level[j - data.var_offset[n]] == 1;
        if (v.top[a] && !both_half) canonical = false;
      }
      if (canonical) best = std::max(best, vertex_score(data, n, v, u));
    }
    int64_t k = vars - 1;
    while (k >= 0 && ++v.level[k] == 3) v.level[k--] = 0;
    if (k < 0) return best;
  }
}

// The vertex's beliefs: non-negative, each variable's sum one, each table's marginals its
// variables' beliefs; and potential . beliefs is its score.
void expect_in_local_polytope(const Dataset& data, int64_t n, const HalfIntegralVertex& v,
                              const std::vector<double>& u) {
  std::vector<double> b(u.size(), 0.0);
  add_vertex_beliefs(data, n, v, 1.0, b);
  double dot = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_GE(b[i], 0.0);
    dot += b[i] * u[i];
  }
  EXPECT_NEAR(dot, vertex_score(data, n, v, u), 1e-12 * (1 + std::abs(dot)));
  for (int64_t x = data.var_offset[n]; x < data.var_offset[n + 1]; ++x)
    EXPECT_DOUBLE_EQ(b[data.state_offset[x]] + b[data.state_offset[x] + 1], 1.0);
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a) {
    const double* t = b.data() + data.num_states() + data.table_offset[a];
    const double* bi = b.data() + data.state_offset[data.factor_vars[data.factor_var_ptr[a]]];
    const double* bj = b.data() + data.state_offset[data.factor_vars[data.factor_var_ptr[a] + 1]];
    EXPECT_DOUBLE_EQ(t[2] + t[3], bi[1]);
    EXPECT_DOUBLE_EQ(t[1] + t[3], bj[1]);
    EXPECT_DOUBLE_EQ(t[0] + t[1], bi[0]);
  }
}

TEST(BinaryLp, TheRoofDualIsTheBestVertexOfTheLocalPolytope) {
  const testing::GraphShape triangle{{2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}}};
  const testing::GraphShape k4{{2, 2, 2, 2}, {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};
  const Dataset data =
      testing::random_dataset({triangle, k4, testing::grid_shape(2, 3),
                               testing::grid_shape(2, 2, true), testing::chain_shape(5)},
                              4, 21);
  BinaryLpOracle oracle;
  int fractional = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const std::vector<double> u = random_potentials(data, trial % 2 ? 1.0 : 1e3, trial);
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      const HalfIntegralVertex v = oracle.maximise(data, n, u);
      const double best = best_half_integral_score(data, n, u);
      EXPECT_NEAR(vertex_score(data, n, v, u), best, 1e-12 * (1 + std::abs(best)))
          << "trial " << trial << " example " << n;
      expect_in_local_polytope(data, n, v, u);
      for (uint8_t level : v.level) fractional += level == 1;
    }
  }
  EXPECT_GT(fractional, 0) << "the loops must reach fractional vertices";
}

TEST(BinaryLp, IsExactOnTheCompactMultiLabelForm) {
  const Dataset data = testing::multi_label_dataset(4);
  BinaryLpOracle oracle;
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<double> u = random_potentials(data, 2.0, 100 + trial);
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      const double best = best_half_integral_score(data, n, u);
      EXPECT_NEAR(vertex_score(data, n, oracle.maximise(data, n, u), u), best,
                  1e-12 * (1 + std::abs(best)));
    }
  }
}

// A chain of 40 variables is past the small cut (80 nodes): the arc-list cut's roof dual, which
// is the exact maximum on a tree, against dynamic programming over the labellings.
TEST(BinaryLp, IsExactOnAChainTooLongForTheSmallCut) {
  const int length = 40;
  ASSERT_GT(2 * length, SmallMinCut::kMaxNodes);
  const Dataset data = testing::random_dataset({testing::chain_shape(length)}, 3, 17);
  BinaryLpOracle oracle;
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<double> u = random_potentials(data, 1.0, 300 + trial);
    // best[s]: the best score of the chain's first variables with the last one in state s.
    const double* first = u.data() + data.state_offset[0];
    std::array<double, 2> best{first[0], first[1]};
    for (int64_t a = 0; a < data.num_factors(); ++a) {
      const int64_t j = data.factor_vars[data.factor_var_ptr[a] + 1];
      ASSERT_EQ(data.factor_vars[data.factor_var_ptr[a]], j - 1) << "a chain in order";
      const double* table = u.data() + data.num_states() + data.table_offset[a];
      const double* unary = u.data() + data.state_offset[j];
      best = {std::max(best[0] + table[0], best[1] + table[2]) + unary[0],
              std::max(best[0] + table[1], best[1] + table[3]) + unary[1]};
    }
    const double exact = std::max(best[0], best[1]);
    const HalfIntegralVertex v = oracle.maximise(data, 0, u);
    EXPECT_NEAR(vertex_score(data, 0, v, u), exact, 1e-12 * (1 + std::abs(exact)));
    expect_in_local_polytope(data, 0, v, u);
  }
}

TEST(BinaryLp, TheLabelledVertexIsTheLabelling) {
  const Dataset data = testing::random_dataset({testing::grid_shape(2, 2)}, 3, 8);
  const HalfIntegralVertex v = labelled_vertex(data, 0);
  std::vector<double> b(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0.0);
  add_vertex_beliefs(data, 0, v, 1.0, b);
  for (int64_t x = 0; x < data.num_vars(); ++x)
    EXPECT_EQ(b[data.state_offset[x] + data.label[x]], 1.0);
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    const int64_t t = 2 * data.label[data.factor_vars[data.factor_var_ptr[a]]] +
                      data.label[data.factor_vars[data.factor_var_ptr[a] + 1]];
    EXPECT_EQ(b[data.num_states() + data.table_offset[a] + t], 1.0);
  }
}

TEST(BinaryLp, OtherThanBinaryPairwiseIsOneLineNamingTheRegion) {
  const Dataset ternary = testing::random_dataset({testing::chain_shape(3, 3)}, 3, 2);
  try {
    require_binary_pairwise(ternary, "--learner ssvm-fw");
    FAIL() << "a ternary variable must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/vars/card[0] is 3"), std::string::npos) << e.what();
  }
  const Dataset tree = testing::random_dataset({testing::tree_shape()}, 3, 2);
  EXPECT_THROW(require_binary_pairwise(tree, "--learner ssvm-fw"), InputError);
  EXPECT_NO_THROW(require_binary_pairwise(testing::multi_label_dataset(3), "x"));
}

}  // namespace
}  // namespace pdsp
