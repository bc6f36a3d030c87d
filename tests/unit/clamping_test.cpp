// Clamped inference (learning/clamping.hpp) against brute force: the conditional marginals and
// the conditional MAP of small trees with some variables held at given states.
#include "pdsp/learning/clamping.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/brute_force.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Every variable held at its label with probability 1/2, else -1.
std::vector<int32_t> half_held(const Dataset& data, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> held(data.label.begin(), data.label.end());
  for (int32_t& y : held)
    if (rng() % 2) y = -1;
  return held;
}

// Beliefs of the clamped problem at `epsilon` with Bethe numbers (exact on a tree) and messages
// swept until they stop moving.
std::vector<double> clamped_beliefs(const Dataset& data, std::span<const int32_t> held,
                                    std::span<const double> theta, double epsilon) {
  LocalProblem problem(data, {epsilon, CountingMode::Bethe, 0.0, false, "tiny"});
  problem.set_potential_offset(clamp_offset(problem, held, theta));
  problem.set_theta(theta);
  for (int sweep = 0; sweep < 500 && problem.sweep(1) > 1e-14; ++sweep) {
  }
  problem.evaluate();
  return {problem.beliefs().begin(), problem.beliefs().begin() + data.num_states()};
}

TEST(Clamping, ConditionalMarginalsOfTreesMatchEnumeration) {
  const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(5, 3), testing::tree_shape()}, 6, 41);
  for (uint64_t seed : {1, 2, 3}) {
    const std::vector<double> theta = testing::normal_theta(data.num_params, 1.5, seed);
    const std::vector<int32_t> held = half_held(data, seed);
    const std::vector<double> beliefs = clamped_beliefs(data, held, theta, 1.0);
    const testing::ExactSolution exact =
        testing::solve_exactly(data, theta, 1.0, 0.0, 1.0, 2.0, {}, held);
    for (int64_t v = 0; v < data.num_vars(); ++v)
      for (int32_t s = 0; s < data.card[v]; ++s) {
        const int64_t i = data.state_offset[v] + s;
        if (held[v] >= 0)  // the indicator: the other states' weight underflows to exactly 0
          EXPECT_NEAR(beliefs[i], s == held[v] ? 1.0 : 0.0, s == held[v] ? 1e-15 : 0.0)
              << "seed " << seed << " var " << v;
        else
          EXPECT_NEAR(beliefs[i], exact.marginals[i], 1e-10) << "seed " << seed << " var " << v;
      }
  }
}

TEST(Clamping, HoldingChangesTheFreeVariablesMarginals) {
  // Guards the test above against a clamp that does nothing: the unclamped marginals differ.
  const Dataset data = testing::random_dataset({testing::chain_shape(5, 3)}, 6, 41);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.5, 1);
  std::vector<int32_t> held(static_cast<size_t>(data.num_vars()), -1);
  held[2] = (data.label[2] + 1) % 3;
  const std::vector<double> free = clamped_beliefs(data, std::vector<int32_t>(5, -1), theta, 1.0);
  const std::vector<double> clamped = clamped_beliefs(data, held, theta, 1.0);
  double largest = 0;
  for (int64_t i = 0; i < data.state_offset[2]; ++i)
    largest = std::max(largest, std::abs(free[i] - clamped[i]));
  EXPECT_GT(largest, 1e-3);
}

TEST(Clamping, ConditionalMapOfTreesMatchesEnumeration) {
  // At a small temperature the arg-max of exact (Bethe, tree) beliefs is the conditional MAP.
  const Dataset data = testing::random_dataset(
      {testing::tree_shape(), testing::chain_shape(6, 2), testing::tree_shape()}, 6, 43);
  for (uint64_t seed : {4, 5, 6}) {
    const std::vector<double> theta = testing::normal_theta(data.num_params, 2.0, seed);
    const std::vector<int32_t> held = half_held(data, seed);
    const std::vector<double> beliefs = clamped_beliefs(data, held, theta, 0.01);
    const testing::ExactSolution map =
        testing::solve_exactly(data, theta, 0.0, 0.0, 1.0, 2.0, {}, held);
    for (int64_t v = 0; v < data.num_vars(); ++v) {
      int32_t best = 0, exact_best = 0;
      for (int32_t s = 1; s < data.card[v]; ++s) {
        if (beliefs[data.state_offset[v] + s] > beliefs[data.state_offset[v] + best]) best = s;
        if (map.marginals[data.state_offset[v] + s] >
            map.marginals[data.state_offset[v] + exact_best])
          exact_best = s;
      }
      ASSERT_EQ(map.marginals[data.state_offset[v] + exact_best], 1.0) << "a unique maximiser";
      EXPECT_EQ(best, exact_best) << "seed " << seed << " var " << v;
      if (held[v] >= 0) {
        EXPECT_EQ(best, held[v]);
      }
    }
  }
}

}  // namespace
}  // namespace pdsp
