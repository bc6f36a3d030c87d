// The sweep schedule: colour class by colour class, with threads over whole examples or inside
// one example. Results are bitwise the same for 1 and 2 threads, and the fixed point is the one
// of the plain sequential schedule (variables in index order).
#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

struct Outcome {
  std::vector<double> messages, beliefs;
  double change, objective, dual;
  bool inside_examples;
};

// Five sweeps and an evaluation at a fixed random theta, on `threads` threads.
Outcome run(const Dataset& data, int threads, bool specialised) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  LocalProblem problem(data, {1.0, CountingMode::Uniform, 1.0, true, "grid", specialised});
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(static_cast<size_t>(data.num_params));
  for (double& t : theta) t = normal(rng);
  problem.set_theta(theta);
  Outcome out;
  out.change = problem.sweep(5);
  out.objective = problem.objective();
  out.dual = problem.evaluate().dual;
  out.messages = problem.messages();
  out.beliefs.assign(problem.beliefs().begin(), problem.beliefs().end());
  out.inside_examples = problem.threads_inside_examples();
  omp_set_num_threads(before);
  return out;
}

void expect_bitwise_equal(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.beliefs, b.beliefs);
  EXPECT_EQ(a.change, b.change);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.dual, b.dual);
}

TEST(Schedule, ThreadsInsideOneLargeExampleGiveBitwiseTheSameResults) {
  // One 8-connected grid (4 colours) large enough for several chunks per colour class.
  const Dataset data = testing::random_dataset({testing::grid_shape(70, 80, true)}, 6, 3);
  for (const bool specialised : {false, true}) {
    const Outcome one = run(data, 1, specialised);
    const Outcome two = run(data, 2, specialised);
    EXPECT_FALSE(one.inside_examples);
    EXPECT_TRUE(two.inside_examples);
    expect_bitwise_equal(one, two);
  }
}

TEST(Schedule, ThreadsOverExamplesGiveBitwiseTheSameResults) {
  std::vector<testing::GraphShape> shapes(12, testing::grid_shape(9, 7));
  const Dataset grids = testing::random_dataset(shapes, 6, 4);  // the binary kernels
  shapes.push_back(testing::loopy_shape());
  const Dataset mixed = testing::random_dataset(shapes, 6, 4);  // the general kernels
  for (const Dataset* data : {&grids, &mixed}) {
    const Outcome one = run(*data, 1, true);
    const Outcome two = run(*data, 2, true);
    EXPECT_FALSE(two.inside_examples);
    expect_bitwise_equal(one, two);
  }
}

TEST(Schedule, ColourOrderReachesTheFixedPointOfTheSequentialOrder) {
  const Dataset data = testing::random_dataset({testing::grid_shape(12, 10, true)}, 6, 5);
  LocalProblem problem(data, {1.0, CountingMode::Uniform, 1.0, true, "grid"});
  std::vector<double> theta(6, 0.4);
  problem.set_theta(theta);
  for (int i = 0; i < 2000 && problem.sweep(1) > 1e-13; ++i) {
  }
  ASSERT_LE(problem.sweep(1), 1e-13);

  // The sequential schedule with the general kernels, on the same potentials.
  const FactorGraph graph(data);
  const CountingNumbers counting = make_counting_numbers(data, graph, CountingMode::Uniform, "");
  const MessagePassing kernels(data, graph, counting, 1.0);
  Workspace w(graph);
  std::vector<double> loss(static_cast<size_t>(data.num_states()));
  for (int64_t v = 0; v < data.num_vars(); ++v)
    for (int64_t s = 0; s < 2; ++s) loss[data.state_offset[v] + s] = s != data.label[v];
  std::vector<double> potential(problem.beliefs().size());
  compute_potentials(data, theta, loss, potential);
  std::vector<double> lambda(static_cast<size_t>(graph.num_message_entries()), 0.0);
  for (int i = 0; i < 2000 && kernels.sweep_example(0, potential.data(), lambda.data(), w) > 1e-13;
       ++i) {
  }
  std::vector<double> beliefs(potential.size());
  kernels.example_beliefs(0, potential.data(), lambda.data(), nullptr, beliefs.data(), w);
  problem.evaluate();
  EXPECT_LT(testing::max_abs_difference(problem.beliefs(), beliefs), 1e-10);
}

}  // namespace
}  // namespace pdsp

namespace pdsp {
namespace {

// A shard's sweep plan: in every phase, the boundary variables (the first of each class here)
// fill the chunks before phase_interior, the interior ones the chunks from it on.
TEST(Schedule, AShardsBoundaryVariablesComeFirstInChunksOfTheirOwn) {
  const Dataset data = testing::random_dataset({testing::grid_shape(60, 70)}, 3, 5);
  const FactorGraph graph(data);
  Colouring colouring = colour_variables(data, graph);
  for (int64_t c = 0; c < colouring.example_class_ptr[1]; ++c)
    colouring.class_boundary_end.push_back(colouring.class_ptr[c] + 100 + 900 * c);
  const WorkPlan plan = plan_sweep(colouring, graph);
  ASSERT_EQ(plan.phase_interior.size(), 2u);
  for (int64_t p = 0; p < 2; ++p) {
    const int64_t interior = plan.phase_interior[p];
    ASSERT_GT(interior, plan.phase_ptr[p]);
    ASSERT_LT(interior, plan.phase_ptr[p + 1]);
    EXPECT_EQ(plan.chunks[interior].begin - plan.chunks[plan.phase_ptr[p]].begin, 100 + 900 * p)
        << "the boundary chunks hold exactly the boundary variables";
    EXPECT_EQ(plan.chunks[interior - 1].end, plan.chunks[interior].begin);
  }
  colouring.class_boundary_end.clear();
  EXPECT_TRUE(plan_sweep(colouring, graph).phase_interior.empty());
}

}  // namespace
}  // namespace pdsp
