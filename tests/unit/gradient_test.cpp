// (ii) Lemma 4's gradient equals central finite differences of F(theta, lambda) at random theta
// and random messages, for several temperatures, counting numbers and regularisers.
#include <gtest/gtest.h>

#include <random>

#include "support/objective_probe.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

struct Case {
  double epsilon;
  CountingMode counting;
  double p;
};

class GradientTest : public ::testing::TestWithParam<Case> {};

TEST_P(GradientTest, MatchesFiniteDifferencesAtRandomThetaAndLambda) {
  const Case c = GetParam();
  Dataset data = testing::random_dataset({testing::loopy_shape(), testing::tree_shape()}, 6, 11);
  testing::set_random_counting(data, 0.3, 1.5, 5);
  LocalProblem problem(data, {c.epsilon, c.counting, 1.0, true, "tiny"});
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> messages = problem.messages();
  for (double& l : messages) l = normal(rng);
  problem.set_messages(messages);
  std::vector<double> theta(6);
  for (double& t : theta) t = normal(rng);

  testing::ObjectiveProbe probe(problem, Regularizer{0.7, c.p});
  const std::vector<double> g = probe.gradient(theta);
  for (size_t r = 0; r < theta.size(); ++r) {
    const double h = 1e-5;
    std::vector<double> up = theta, down = theta;
    up[r] += h;
    down[r] -= h;
    const double numeric = (probe.value(up) - probe.value(down)) / (2 * h);
    EXPECT_NEAR(g[r], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << "param " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Temperatures, GradientTest,
                         ::testing::Values(Case{1.0, CountingMode::Uniform, 2.0},
                                           Case{0.5, CountingMode::File, 2.0},
                                           Case{0.05, CountingMode::Uniform, 2.0},
                                           Case{1.0, CountingMode::File, 1.5},
                                           Case{2.0, CountingMode::Bethe, 2.0}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return counting_mode_name(param_info.param.counting) + "_eps" +
                                  std::to_string(static_cast<int>(100 * param_info.param.epsilon)) +
                                  "_p" + std::to_string(static_cast<int>(10 * param_info.param.p));
                         });

}  // namespace
}  // namespace pdsp
