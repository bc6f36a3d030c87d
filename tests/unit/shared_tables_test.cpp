// The shared-table path of pairwise factors (shared_tables.hpp) against the general kernels (the
// same MessagePassing without set_potentials) and against brute force: messages, F, beliefs and
// dual terms at temperatures from 1 to 1e-3, with potentials small enough for the probability
// domain and large enough for the log-domain fallback, after new potentials and new
// temperatures; Bethe on trees reaches the exact marginals, and F's derivative in theta is the
// moments.
#include "pdsp/inference/shared_tables.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/brute_force.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;

constexpr int32_t kRowParams = testing::kSharedTableRowParams;

testing::GraphShape four_state_chain() {
  testing::GraphShape shape = testing::chain_shape(5);
  shape.cards.assign(5, 4);
  return shape;
}

Dataset test_data() {
  return testing::shared_table_dataset(
      {four_state_chain(), testing::tree_shape(), four_state_chain(), testing::chain_shape(4),
       testing::tree_shape()},
      7);
}

std::vector<double> random_theta(int64_t size, double table_scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(static_cast<size_t>(size));
  for (int64_t r = 0; r < size; ++r) theta[r] = (r < kRowParams ? 1.0 : table_scale) * normal(rng);
  return theta;
}

std::vector<double> potentials_of(const Dataset& data, const std::vector<double>& theta) {
  std::vector<double> potential(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  FeatureIndex(data).potentials(theta, {}, potential);
  return potential;
}

TEST(SharedTables, OnlyPairwiseFactorsOfATableTypeWithoutRowsShareOne) {
  const Dataset data = test_data();
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Bethe, "tiny");
  SharedPairwiseTables tables(data, counting);
  const std::vector<double> potential = potentials_of(data, random_theta(data.num_params, 1, 3));
  tables.rebuild(potential.data(), 1.0);
  int64_t shared = 0;
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    const bool expected = a != 0 && data.arity(a) == 2;
    ASSERT_EQ(tables.of(a) != nullptr, expected) << "factor " << a;
    if (!expected) continue;
    ++shared;
    // Its table is the representative's, which is this factor's own potential table.
    const SharedTable& table = *tables.of(a);
    const double* own = potential.data() + data.num_states() + data.table_offset[a];
    for (int64_t t = 0; t < table.rows * table.cols; ++t) ASSERT_EQ(table.u[t], own[t]);
    EXPECT_EQ(table.rows, data.card[data.factor_vars[data.factor_var_ptr[a]]]);
  }
  EXPECT_GT(shared, 10);
}

// Factor types that all read observation rows (dim > 0), as contrast-sensitive pairwise terms
// do: no table to share, and the kernels run (this crashed before: the per-factor index was
// read without having been filled).
TEST(SharedTables, NoneWhereEveryTypedFactorReadsARow) {
  Dataset data = test_data();
  for (int32_t& type : data.factor_types.type)
    if (type >= 0 && data.factor_types.dim[type] == 0) type = -1;
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Bethe, "tiny");
  SharedPairwiseTables tables(data, counting);
  for (int64_t a = 0; a < data.num_factors(); ++a) EXPECT_EQ(tables.of(a), nullptr);
  LocalProblem problem(data, {1.0, CountingMode::Bethe, 1.0, true, "tiny"});
  problem.set_theta(random_theta(data.num_params, 1, 3));
  problem.sweep(3);
  EXPECT_TRUE(std::isfinite(problem.evaluate().objective));
}

struct Case {
  double epsilon;
  double table_scale;  // of the shared table's parameters
  bool fast;           // whether the tables are within the probability domain's range
};

class SharedTablesTest : public ::testing::TestWithParam<Case> {};

// Every kernel of the shared path against the general path on the same messages.
TEST_P(SharedTablesTest, EqualTheGeneralKernels) {
  const Case c = GetParam();
  const Dataset data = test_data();
  const FactorGraph graph(data);
  for (CountingMode mode : {CountingMode::Bethe, CountingMode::Uniform}) {
    const CountingNumbers counting = make_counting_numbers(data, graph, mode, "tiny");
    MessagePassing shared(data, graph, counting, c.epsilon);
    const MessagePassing general(data, graph, counting, c.epsilon);
    const std::vector<double> potential =
        potentials_of(data, random_theta(data.num_params, c.table_scale, 5));
    shared.set_potentials(potential.data());
    SharedPairwiseTables tables(data, counting);
    tables.rebuild(potential.data(), c.epsilon);
    EXPECT_EQ(tables.of(1) != nullptr, c.fast);

    Workspace w(graph);
    std::mt19937_64 rng(9);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> lambda(static_cast<size_t>(graph.num_message_entries()));
    for (double& l : lambda) l = c.table_scale * normal(rng);
    const double tolerance = 1e-10 * std::max(1.0, c.table_scale);
    const int64_t factors = data.num_factors();
    const MessageState state = lambda;
    EXPECT_NEAR(shared.factor_objective(0, factors, potential.data(), state, w),
                general.factor_objective(0, factors, potential.data(), state, w),
                tolerance * static_cast<double>(factors));

    // Beliefs: the variables' first, then the folded ones (shared_tables.hpp) through what is
    // read of them, their sums per table (the moments), the table part of the dual that the fold
    // adds, and their marginals (the violation, found in the factor pass); every other factor's
    // table as it is.
    const size_t size = potential.size();
    std::vector<double> b_shared(size, 0.0), b_general(size, 0.0);
    const int64_t vars = data.num_vars();
    BeliefTerms terms_shared =
        shared.variable_beliefs(0, vars, potential.data(), state, nullptr, b_shared.data(), w);
    BeliefTerms terms_general =
        general.variable_beliefs(0, vars, potential.data(), state, nullptr, b_general.data(), w);
    EXPECT_LT(max_abs_difference(std::span<const double>(b_shared).first(data.num_states()),
                                 std::span<const double>(b_general).first(data.num_states())),
              1e-12);
    terms_shared.add(
        shared.factor_beliefs(0, factors, potential.data(), state, b_shared.data(), w));
    terms_general.add(
        general.factor_beliefs(0, factors, potential.data(), state, b_general.data(), w));
    terms_shared.dual -= shared.fold_shared_beliefs();
    const std::span<const uint8_t> folded = shared.factors_with_folded_beliefs();
    EXPECT_EQ(!folded.empty() && folded[1] != 0, c.fast);
    for (int64_t a = 0; a < factors; ++a) {
      if (!folded.empty() && folded[a]) continue;
      for (int64_t i = data.table_offset[a]; i < data.table_offset[a + 1]; ++i)
        EXPECT_NEAR(b_shared[data.num_states() + i], b_general[data.num_states() + i], 1e-12);
    }
    std::vector<double> z_shared(static_cast<size_t>(data.num_params)), z_general = z_shared;
    FeatureIndex(data).moments(b_shared, z_shared, folded);
    shared.add_shared_moments(z_shared);
    FeatureIndex(data).moments(b_general, z_general);
    EXPECT_LT(max_abs_difference(z_shared, z_general), 1e-12 * static_cast<double>(factors));
    EXPECT_NEAR(terms_shared.violation, terms_general.violation, 1e-12);
    EXPECT_NEAR(terms_shared.objective, terms_general.objective,
                tolerance * static_cast<double>(factors + vars));
    EXPECT_NEAR(terms_shared.dual, terms_general.dual,
                tolerance * static_cast<double>(factors + vars));

    // Block updates, one variable after the other (each reads the messages the last one set).
    std::vector<double> l_shared = lambda, l_general = lambda;
    for (int sweep = 0; sweep < 3; ++sweep)
      for (int64_t v = 0; v < data.num_vars(); ++v) {
        shared.update_variable(v, potential.data(), l_shared.data(), w);
        general.update_variable(v, potential.data(), l_general.data(), w);
        ASSERT_LT(max_abs_difference(l_shared, l_general), 1e3 * tolerance)
            << counting_mode_name(mode) << " sweep " << sweep << " variable " << v;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Temperatures, SharedTablesTest,
    ::testing::Values(Case{1.0, 1.0, true}, Case{0.3, 1.0, true}, Case{1e-3, 0.05, true},
                      Case{1.0, 60.0, true}, Case{1e-3, 1.0, false}, Case{1.0, 1e3, false}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      return "eps" + std::to_string(static_cast<int>(1e3 * param_info.param.epsilon)) +
             "e_3_scale" + std::to_string(static_cast<int>(100 * param_info.param.table_scale)) +
             "e_2";
    });

// The tables follow set_potentials and set_epsilon: a stale table would give the old values.
TEST(SharedTables, FollowNewPotentialsAndTemperatures) {
  const Dataset data = test_data();
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Bethe, "tiny");
  MessagePassing shared(data, graph, counting, 1.0);
  MessagePassing general(data, graph, counting, 1.0);
  std::vector<double> potential = potentials_of(data, random_theta(data.num_params, 1, 5));
  shared.set_potentials(potential.data());
  Workspace w(graph);
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> lambda(static_cast<size_t>(graph.num_message_entries()));
  for (double& l : lambda) l = normal(rng);
  const MessageState state = lambda;
  const int64_t factors = data.num_factors();
  const auto agree = [&](const char* when) {
    EXPECT_NEAR(shared.factor_objective(0, factors, potential.data(), state, w),
                general.factor_objective(0, factors, potential.data(), state, w), 1e-9)
        << when;
  };
  agree("at first");
  potential = potentials_of(data, random_theta(data.num_params, 2, 6));
  shared.set_potentials(potential.data());
  agree("after new potentials");
  for (double epsilon : {0.5, 1e-3, 2.0}) {
    shared.set_epsilon(epsilon);
    general.set_epsilon(epsilon);
    agree(("after set_epsilon(" + std::to_string(epsilon) + ")").c_str());
  }
}

ProblemSettings bethe_settings(double epsilon) {
  return {epsilon, CountingMode::Bethe, 1.0, true, "tiny"};
}

// Bethe counting numbers on trees are exact at the fixed point (design.md §1): the beliefs are
// brute force's marginals (the variables' and the unfolded factor tables; the folded ones through
// the moments and the violation) and F is its soft-max, for any thread count; also at a
// temperature where the tables fall back to the log domain (read through their representative,
// since the potentials of the other factors are not computed).
TEST(SharedTables, BetheOnTreesGivesTheExactMarginals) {
  const Dataset data = test_data();
  for (const auto& [epsilon, scale] : {std::pair{1.0, 1.0}, {0.2, 1.0}, {0.01, 10.0}}) {
    const std::vector<double> theta = random_theta(data.num_params, scale, 8);
    const testing::ExactSolution exact =
        testing::solve_exactly(testing::expand_to_rows(data), theta, epsilon, 1.0, 1, 2);
    std::vector<double> objective;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      LocalProblem problem(data, bethe_settings(epsilon));
      problem.set_theta(theta);
      problem.sweep(40);
      const LocalEvaluation evaluation = problem.evaluate();
      MessagePassing kernels(data, problem.graph(), problem.counting(), epsilon);
      const std::vector<double> potential = potentials_of(data, theta);
      kernels.set_potentials(potential.data());
      const std::span<const uint8_t> folded = kernels.factors_with_folded_beliefs();
      const std::span<const double> beliefs = problem.beliefs();
      for (int64_t i = 0; i < data.num_states(); ++i)
        EXPECT_NEAR(beliefs[i], exact.marginals[i], 1e-9) << "eps " << epsilon;
      int64_t folded_factors = 0;
      for (int64_t a = 0; a < data.num_factors(); ++a) {
        if (folded[a]) {
          ++folded_factors;
          continue;
        }
        for (int64_t i = data.num_states() + data.table_offset[a];
             i < data.num_states() + data.table_offset[a + 1]; ++i)
          EXPECT_NEAR(beliefs[i], exact.marginals[i], 1e-9) << "eps " << epsilon;
      }
      EXPECT_EQ(folded_factors > 0, epsilon > 0.01);  // the log domain's tables are not folded
      std::vector<double> z(static_cast<size_t>(data.num_params)), z_exact = z;
      problem.model_moments(z);
      FeatureIndex(data).moments(exact.marginals, z_exact);
      EXPECT_LT(max_abs_difference(z, z_exact), 1e-8) << "eps " << epsilon;
      EXPECT_LT(evaluation.violation, 1e-9) << "eps " << epsilon;
      EXPECT_NEAR(evaluation.objective, exact.smax_sum, 1e-9 * std::max(1.0, scale));
      objective.push_back(evaluation.objective);
    }
    omp_set_num_threads(1);
    EXPECT_EQ(objective[0], objective[1]) << "F depends on the thread count";
  }
}

// The potentials skip exactly the tables that the kernels read through another factor, and
// compute every other position as compute_potentials does.
TEST(SharedTables, PotentialsSkipOnlyTheTablesReadThroughARepresentative) {
  const Dataset data = test_data();
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Bethe, "tiny");
  const MessagePassing kernels(data, graph, counting, 1.0);
  const std::span<const uint8_t> skip = kernels.factors_without_own_table();
  ASSERT_EQ(static_cast<int64_t>(skip.size()), data.num_factors());
  const std::vector<double> theta = random_theta(data.num_params, 1, 4);
  const std::vector<double> expected = potentials_of(data, theta);
  std::vector<double> actual(expected.size(), NAN);
  FeatureIndex(data).potentials(theta, {}, actual, skip);
  int64_t skipped = 0;
  for (int64_t a = 0; a < data.num_factors(); ++a)
    for (int64_t i = data.num_states() + data.table_offset[a];
         i < data.num_states() + data.table_offset[a + 1]; ++i) {
      if (skip[a]) {
        EXPECT_TRUE(std::isnan(actual[i])) << "factor " << a;
        ++skipped;
      } else {
        EXPECT_EQ(actual[i], expected[i]) << "factor " << a;
      }
    }
  for (int64_t i = 0; i < data.num_states(); ++i) EXPECT_EQ(actual[i], expected[i]);
  EXPECT_GT(skipped, 0);
}

// At converged messages F is the log-partition function (times eps), whose derivative in theta
// is the model moments: central differences of F against the moments of the beliefs.
TEST(SharedTables, TheMomentsAreTheDerivativeOfF) {
  const Dataset data = test_data();
  const std::vector<double> theta = random_theta(data.num_params, 1, 12);
  LocalProblem problem(data, bethe_settings(1.0));
  const auto F = [&](const std::vector<double>& at) {
    problem.set_theta(at);
    problem.sweep(40);
    return problem.objective();
  };
  F(theta);
  problem.evaluate();
  std::vector<double> z(static_cast<size_t>(data.num_params), 0.0);
  problem.model_moments(z);
  const double h = 1e-5;
  for (int64_t r = 0; r < data.num_params; ++r) {
    std::vector<double> plus = theta, minus = theta;
    plus[r] += h;
    minus[r] -= h;
    EXPECT_NEAR((F(plus) - F(minus)) / (2 * h), z[r], 1e-6) << "theta[" << r << "]";
  }
}

}  // namespace
}  // namespace pdsp
