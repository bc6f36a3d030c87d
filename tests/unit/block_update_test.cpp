// (iii) The update of one variable's messages (Lemma 3) is the exact minimiser of F over that
// block: F never increases, and any perturbation of the block afterwards increases F.
#include <gtest/gtest.h>

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/features/feature_index.hpp"
#include "support/objective_probe.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

struct Case {
  double epsilon;
  CountingMode counting;
};

class BlockUpdateTest : public ::testing::TestWithParam<Case> {};

TEST_P(BlockUpdateTest, IsTheExactMinimiserOverTheBlock) {
  const Case c = GetParam();
  Dataset data = testing::random_dataset({testing::loopy_shape()}, 5, 21);
  testing::set_random_counting(data, 0.2, 1.2, 9);
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, c.counting, "tiny");
  const MessagePassing kernels(data, graph, counting, c.epsilon);
  Workspace workspace(graph);

  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(5), loss;
  for (double& t : theta) t = normal(rng);
  std::vector<double> potential(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  compute_potentials(data, theta, loss, potential);
  std::vector<double> lambda(static_cast<size_t>(graph.num_message_entries()));
  for (double& l : lambda) l = normal(rng);

  const auto F = [&](const std::vector<double>& messages) {
    return kernels.example_objective(0, potential.data(), messages.data(), workspace);
  };
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    const double before = F(lambda);
    kernels.update_variable(v, potential.data(), lambda.data(), workspace);
    const double after = F(lambda);
    EXPECT_LE(after, before + 1e-12) << "variable " << v;
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> perturbed = lambda;
      for (int64_t i = graph.var_slot_ptr[v]; i < graph.var_slot_ptr[v + 1]; ++i) {
        const int64_t e = graph.var_slots[i];
        for (int64_t k = graph.message_offset(e); k < graph.message_offset(e + 1); ++k)
          perturbed[k] += 1e-3 * normal(rng);
      }
      EXPECT_GE(F(perturbed), after - 1e-12) << "variable " << v << " trial " << trial;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Temperatures, BlockUpdateTest,
                         ::testing::Values(Case{1.0, CountingMode::Uniform},
                                           Case{0.3, CountingMode::File},
                                           Case{0.0, CountingMode::Uniform},
                                           Case{0.0, CountingMode::File}),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return counting_mode_name(param_info.param.counting) + "_eps" +
                                  std::to_string(static_cast<int>(100 * param_info.param.epsilon));
                         });

// The message updates of a convex problem decrease F monotonically sweep after sweep.
TEST(BlockUpdate, SweepsDecreaseTheObjectiveMonotonically) {
  Dataset data = testing::random_dataset({testing::loopy_shape(), testing::loopy_shape()}, 5, 8);
  LocalProblem problem(data, {0.5, CountingMode::Uniform, 1.0, true, "tiny"});
  testing::ObjectiveProbe probe(problem, Regularizer{1.0, 2.0});
  const std::vector<double> theta = {0.5, -1.0, 0.3, 2.0, -0.2};
  double previous = probe.value(theta);
  for (int sweep = 0; sweep < 30; ++sweep) {
    problem.sweep(1);
    const double current = probe.value(theta);
    EXPECT_LE(current, previous + 1e-12) << "sweep " << sweep;
    previous = current;
  }
}

}  // namespace
}  // namespace pdsp

namespace pdsp {
namespace {

// A variable in no factor has no message; c_v = 0 there is legal and its belief is the arg-max.
TEST(Counting, AnIsolatedVariableMayHaveZeroCountingNumber) {
  DatasetBuilder builder(2);
  builder.begin_example();
  const int64_t a = builder.add_variable(2, 0, {{{0, 1.0}}, {}});
  const int64_t b = builder.add_variable(2, 1, {{}, {{1, 1.0}}});
  builder.add_variable(3, 2, {{}, {{0, 2.0}}, {{1, 1.0}}});
  builder.add_factor({a, b});
  Dataset data = builder.finish();
  data.var_counting = {1.0, 1.0, 0.0};
  data.factor_counting = {1.0};
  data.counted = true;
  LocalProblem problem(data, {1.0, CountingMode::File, 0.0, false, "tiny"});
  problem.set_theta(std::vector<double>{0.5, 0.25});
  problem.sweep(3);
  problem.evaluate();
  const auto b3 = problem.beliefs().subspan(4, 3);
  EXPECT_EQ(std::vector<double>(b3.begin(), b3.end()), (std::vector<double>{0.0, 1.0, 0.0}));
}

}  // namespace
}  // namespace pdsp
