// make_factor_beliefs_consistent (local_polytope.hpp) on factors of arity 2 and 3 with 2 and 3
// states: from arbitrary tables it returns non-negative tables whose marginals, summed here by
// decoding every joint state, are the variable beliefs; it leaves the marginals of a joint
// distribution as they are; and where a variable belief is deterministic it returns the one
// consistent table there is.
#include "pdsp/inference/local_polytope.hpp"

#include <gtest/gtest.h>

#include <random>

#include "pdsp/learning/local_problem.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Random points of the simplex, one per variable and one per factor table.
std::vector<double> random_beliefs(const Dataset& data, std::mt19937_64& random) {
  std::vector<double> belief(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  std::exponential_distribution<double> draw(1.0);
  const auto fill_simplex = [&](int64_t first, int64_t last) {
    double sum = 0;
    for (int64_t i = first; i < last; ++i) sum += belief[i] = draw(random);
    for (int64_t i = first; i < last; ++i) belief[i] /= sum;
  };
  for (int64_t v = 0; v < data.num_vars(); ++v)
    fill_simplex(data.state_offset[v], data.state_offset[v + 1]);
  for (int64_t a = 0; a < data.num_factors(); ++a)
    fill_simplex(data.num_states() + data.table_offset[a],
                 data.num_states() + data.table_offset[a + 1]);
  return belief;
}

// The state of each variable of factor a in joint state t (tables are row-major over the
// factor's variables, the last one fastest).
std::vector<int32_t> decode(const Dataset& data, int64_t a, int64_t t) {
  const int64_t first = data.factor_var_ptr[a];
  std::vector<int32_t> states(static_cast<size_t>(data.factor_var_ptr[a + 1] - first));
  for (int64_t k = static_cast<int64_t>(states.size()) - 1; k >= 0; --k) {
    const int32_t card = data.card[data.factor_vars[first + k]];
    states[k] = static_cast<int32_t>(t % card);
    t /= card;
  }
  return states;
}

// Every factor table non-negative, summing to one, with the variable beliefs as marginals.
void expect_consistent(const Dataset& data, const std::vector<double>& belief) {
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    const int64_t first = data.factor_var_ptr[a];
    const int64_t arity = data.factor_var_ptr[a + 1] - first;
    std::vector<std::vector<double>> marginal(static_cast<size_t>(arity));
    for (int64_t k = 0; k < arity; ++k)
      marginal[k].assign(data.card[data.factor_vars[first + k]], 0);
    double total = 0;
    for (int64_t t = 0; t < data.table_offset[a + 1] - data.table_offset[a]; ++t) {
      const double b = belief[data.num_states() + data.table_offset[a] + t];
      EXPECT_GE(b, 0.0) << "factor " << a << " entry " << t;
      total += b;
      const std::vector<int32_t> states = decode(data, a, t);
      for (int64_t k = 0; k < arity; ++k) marginal[k][states[k]] += b;
    }
    EXPECT_NEAR(total, 1.0, 1e-14) << "factor " << a;
    for (int64_t k = 0; k < arity; ++k) {
      const int64_t v = data.factor_vars[first + k];
      for (int32_t s = 0; s < data.card[v]; ++s)
        EXPECT_NEAR(marginal[k][s], belief[data.state_offset[v] + s], 1e-14)
            << "factor " << a << ", variable " << v << ", state " << s;
    }
  }
}

void repair_all(const Dataset& data, std::vector<double>& belief) {
  const FactorGraph graph(data);
  Workspace w(graph);
  make_factor_beliefs_consistent(data, graph, 0, data.num_factors(), belief.data(), w);
}

const Dataset& shapes() {
  static const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::loopy_shape(), testing::chain_shape(3)}, 2, 7);
  return data;
}

TEST(LocalPolytope, ArbitraryTablesBecomeConsistent) {
  const Dataset& data = shapes();
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> belief = random_beliefs(data, random);
    const std::vector<double> before = belief;
    repair_all(data, belief);
    expect_consistent(data, belief);
    EXPECT_TRUE(std::equal(before.begin(), before.begin() + data.num_states(), belief.begin()))
        << "the variable beliefs stay";
  }
}

// Pairs of binary variables take an unrolled path: the same tables bitwise as the general one,
// from arbitrary tables, from joint distributions' marginals (nothing lacking) and with
// deterministic variables (one of the variables lacking nothing).
TEST(LocalPolytope, BinaryPairsGiveTheGeneralPathsTablesBitwise) {
  const Dataset data = testing::random_dataset({testing::grid_shape(4, 4)}, 1, 3);
  const FactorGraph graph(data);
  Workspace w(graph);
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<double> belief = random_beliefs(data, random);
    for (int64_t v = trial % 3; trial % 2 == 1 && v < data.num_vars(); v += 3) {
      belief[data.state_offset[v]] = 1.0;  // deterministic variables
      belief[data.state_offset[v] + 1] = 0.0;
    }
    std::vector<double> general = belief;
    for (int64_t a = 0; a < data.num_factors(); ++a)
      make_table_consistent(data, graph, a, general.data(), w);
    make_factor_beliefs_consistent(data, graph, 0, data.num_factors(), belief.data(), w);
    EXPECT_EQ(belief, general) << "trial " << trial;
    make_factor_beliefs_consistent(data, graph, 0, data.num_factors(), belief.data(), w);
    for (int64_t a = 0; a < data.num_factors(); ++a)
      make_table_consistent(data, graph, a, general.data(), w);
    EXPECT_EQ(belief, general) << "trial " << trial << ", consistent already";
  }
}

TEST(LocalPolytope, MarginalsOfAJointDistributionStay) {
  // One example, one random distribution over its labellings; every belief is its marginal.
  const Dataset data = testing::random_dataset({testing::loopy_shape()}, 2, 3);
  std::mt19937_64 random(5);
  std::exponential_distribution<double> draw(1.0);
  int64_t labellings = 1;
  for (int32_t c : data.card) labellings *= c;
  std::vector<double> belief(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0);
  std::vector<double> p(static_cast<size_t>(labellings));
  double sum = 0;
  for (double& x : p) sum += x = draw(random);
  for (int64_t l = 0; l < labellings; ++l) {
    std::vector<int32_t> labels(static_cast<size_t>(data.num_vars()));
    for (int64_t v = 0, rest = l; v < data.num_vars(); ++v) {
      labels[v] = static_cast<int32_t>(rest % data.card[v]);
      rest /= data.card[v];
    }
    const double mass = p[l] / sum;
    for (int64_t v = 0; v < data.num_vars(); ++v) belief[data.state_offset[v] + labels[v]] += mass;
    for (int64_t a = 0; a < data.num_factors(); ++a) {
      int64_t t = 0;
      for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
        t = t * data.card[data.factor_vars[e]] + labels[data.factor_vars[e]];
      belief[data.num_states() + data.table_offset[a] + t] += mass;
    }
  }
  std::vector<double> repaired = belief;
  repair_all(data, repaired);
  // Up to the round-off of the marginals, which sum the labellings' mass in another order.
  for (size_t i = 0; i < belief.size(); ++i) EXPECT_NEAR(repaired[i], belief[i], 1e-14) << i;
}

TEST(LocalPolytope, DeterministicVariablesLeaveOneConsistentTable) {
  const Dataset& data = shapes();
  std::mt19937_64 random(13);
  std::vector<double> belief = random_beliefs(data, random);
  // Every variable certain of state 1: the only consistent factor table is that labelling's.
  for (int64_t v = 0; v < data.num_vars(); ++v)
    for (int32_t s = 0; s < data.card[v]; ++s) belief[data.state_offset[v] + s] = s == 1 ? 1 : 0;
  repair_all(data, belief);
  expect_consistent(data, belief);
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    int64_t ones = 0;
    for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
      ones = ones * data.card[data.factor_vars[e]] + 1;
    EXPECT_EQ(belief[data.num_states() + data.table_offset[a] + ones], 1.0) << "factor " << a;
  }
}

// LocalProblem::consistent_beliefs: at converged messages the beliefs are consistent already, so
// the repaired moments are the model moments and their entropy terms plus the expected loss are
// the dual terms the kernels sum, also for the factors whose beliefs the shared-table kernels
// keep folded (format 2's shared tables), which the repair must first write out, and for the
// binary pairwise kernels.
void expect_consistent_beliefs_of_converged_messages(const Dataset& data,
                                                     const ProblemSettings& settings) {
  LocalProblem problem(data, settings);
  std::vector<double> theta(static_cast<size_t>(data.num_params));
  std::mt19937_64 random(19);
  std::normal_distribution<double> normal(0.0, 0.5);
  for (double& t : theta) t = normal(random);
  problem.set_theta(theta);
  problem.sweep(2000);
  const LocalEvaluation e = problem.evaluate();
  ASSERT_LT(e.violation, 1e-12);
  std::vector<double> model(theta.size()), consistent(theta.size());
  problem.model_moments(model);
  const double entropy_terms = problem.consistent_beliefs(consistent);
  EXPECT_LT(testing::max_abs_difference(model, consistent), 1e-10);
  EXPECT_GT(entropy_terms, 0.0);
  EXPECT_NEAR(entropy_terms + e.expected_loss, e.dual, 1e-10 * std::abs(e.dual));
}

TEST(LocalPolytope, ConsistentBeliefsOfConvergedMessagesAreTheModelsOwn) {
  // Three states, so that the general kernels (and their shared tables) run.
  testing::GraphShape chain = testing::chain_shape(20), grid = testing::grid_shape(4, 4);
  chain.cards.assign(chain.cards.size(), 3);
  grid.cards.assign(grid.cards.size(), 3);
  ProblemSettings settings;
  settings.epsilon = 0;
  settings.smoothing = 0.5;
  settings.source = "compact";
  expect_consistent_beliefs_of_converged_messages(
      testing::random_compact_dataset({chain, grid}, 17), settings);
  ProblemSettings binary;
  binary.epsilon = 0.7;
  binary.counting = CountingMode::Uniform;
  binary.source = "binary grid";
  expect_consistent_beliefs_of_converged_messages(
      testing::random_dataset({testing::grid_shape(5, 4)}, 2, 23), binary);
}

}  // namespace
}  // namespace pdsp
