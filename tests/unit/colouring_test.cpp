// The colouring behind the sweep schedule: a proper colouring of every example's interaction
// graph (no two variables of one colour share a factor), each example's variables listed once,
// and the checkerboard on a grid stored row by row.
#include "pdsp/inference/colouring.hpp"

#include <gtest/gtest.h>

#include <set>

#include "pdsp/inference/kernels.hpp"
#include "pdsp/inference/work_plan.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

void expect_proper(const Dataset& data, const Colouring& colouring) {
  const FactorGraph graph(data);
  std::vector<int64_t> colour_of(static_cast<size_t>(data.num_vars()), -1);
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    std::set<int64_t> seen;
    for (int64_t c = colouring.example_class_ptr[n]; c < colouring.example_class_ptr[n + 1]; ++c)
      for (int64_t v : colouring.members(c)) {
        EXPECT_TRUE(seen.insert(v).second) << "variable " << v << " listed twice";
        EXPECT_GE(v, data.var_offset[n]);
        EXPECT_LT(v, data.var_offset[n + 1]);
        colour_of[v] = c;
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), data.var_offset[n + 1] - data.var_offset[n]);
  }
  for (int64_t a = 0; a < data.num_factors(); ++a)
    for (int64_t i = data.factor_var_ptr[a]; i < data.factor_var_ptr[a + 1]; ++i)
      for (int64_t j = i + 1; j < data.factor_var_ptr[a + 1]; ++j)
        EXPECT_NE(colour_of[data.factor_vars[i]], colour_of[data.factor_vars[j]])
            << "factor " << a << " joins two variables of one colour";
}

TEST(Colouring, IsProperOnMixedGraphs) {
  const Dataset data =
      testing::random_dataset({testing::loopy_shape(), testing::tree_shape(),
                               testing::grid_shape(5, 4, true), testing::chain_shape(1)},
                              3, 1);
  const Colouring colouring = colour_variables(data, FactorGraph(data));
  expect_proper(data, colouring);
  EXPECT_EQ(colouring.num_classes(3), 1);  // a lone variable
  EXPECT_LE(colouring.num_classes(2), 4);  // an 8-connected grid needs 4
}

TEST(Colouring, AFourConnectedGridGetsTheCheckerboard) {
  const Dataset data = testing::random_dataset({testing::grid_shape(6, 7)}, 3, 1);
  const Colouring colouring = colour_variables(data, FactorGraph(data));
  expect_proper(data, colouring);
  ASSERT_EQ(colouring.num_classes(0), 2);
  for (int64_t v : colouring.members(0)) EXPECT_EQ((v / 7 + v % 7) % 2, 0) << v;
}

TEST(WorkPlan, SweepChunksCoverEachClassInOrderWithinTheSlotBudget) {
  const Dataset data = testing::random_dataset({testing::grid_shape(60, 50)}, 3, 1);
  const FactorGraph graph(data);
  const Colouring colouring = colour_variables(data, graph);
  const WorkPlan plan = plan_sweep(colouring, graph);
  ASSERT_EQ(plan.bundle_phase_ptr, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(plan.order, colouring.order);  // a large example is a bundle of its own
  for (int64_t p = 0; p < 2; ++p) {
    int64_t next = colouring.class_ptr[p];
    for (int64_t c = plan.phase_ptr[p]; c < plan.phase_ptr[p + 1]; ++c) {
      EXPECT_EQ(plan.chunks[c].begin, next);
      int64_t slots = 0;
      for (int64_t i = plan.chunks[c].begin; i < plan.chunks[c].end; ++i)
        slots += graph.degree(plan.order[i]);
      EXPECT_LE(slots, kChunkSlots);
      next = plan.chunks[c].end;
    }
    EXPECT_EQ(next, colouring.class_ptr[p + 1]);
  }
}

// Small examples are bundled: phase c of a bundle holds class c of each of its examples, in
// example order, so that every example updates its classes in its own order.
// Bundle b's phases in `plan`: the index of its first and how many.
std::pair<int64_t, int64_t> bundle_phases(const WorkPlan& plan, int64_t b) {
  return {plan.bundle_phase_ptr[b], plan.bundle_phase_ptr[b + 1] - plan.bundle_phase_ptr[b]};
}

// 40 small examples, one of 144 variables (a bundle of its own), one more small one.
Dataset small_examples_and_a_large_one() {
  std::vector<testing::GraphShape> shapes;
  for (int n = 0; n < 40; ++n)
    shapes.push_back(n % 3 == 0 ? testing::loopy_shape() : testing::chain_shape(2 + n % 5));
  shapes.push_back(testing::grid_shape(12, 12));
  shapes.push_back(testing::chain_shape(3));
  return testing::random_dataset(shapes, 3, 1);
}

TEST(WorkPlan, SmallExamplesAreSweptSideBySideClassByClass) {
  const Dataset data = small_examples_and_a_large_one();
  const FactorGraph graph(data);
  const Colouring colouring = colour_variables(data, graph);
  const WorkPlan plan = plan_sweep(colouring, graph);
  EXPECT_LT(plan.num_bundles(), data.num_examples() / 4);
  // Each bundle's variables, phase by phase, are each example's classes in order.
  int64_t n = 0;
  for (int64_t b = 0; b < plan.num_bundles(); ++b) {
    const auto [first_phase, phases] = bundle_phases(plan, b);
    const int64_t begin = plan.chunks[plan.phase_ptr[first_phase]].begin;
    const int64_t end = plan.chunks[plan.phase_ptr[first_phase + phases] - 1].end;
    std::vector<LocalIndex> expected;
    const int64_t first_example = n;
    int64_t variables = 0;
    while (n < data.num_examples() && variables < end - begin) {
      variables += data.var_offset[n + 1] - data.var_offset[n];
      ++n;
    }
    EXPECT_TRUE(n - first_example == 1 || variables <= kBundleVariables) << "bundle " << b;
    for (int64_t phase = 0; phase < phases; ++phase)
      for (int64_t e = first_example; e < n; ++e)
        if (phase < colouring.num_classes(e))
          for (LocalIndex v : colouring.members(colouring.example_class_ptr[e] + phase))
            expected.push_back(v);
    EXPECT_EQ(std::vector<LocalIndex>(plan.order.begin() + begin, plan.order.begin() + end),
              expected)
        << "bundle " << b;
  }
  EXPECT_EQ(n, data.num_examples());
}

TEST(WorkPlan, SmallExamplesAreEvaluatedTogetherEachAsItsTwoPhasesInOrder) {
  const Dataset data = small_examples_and_a_large_one();
  {
    const WorkPlan plan = plan_evaluation(data);
    EXPECT_LT(plan.num_bundles(), data.num_examples() / 4);
    int64_t n = 0;
    for (int64_t b = 0; b < plan.num_bundles(); ++b) {
      const auto [first_phase, phases] = bundle_phases(plan, b);
      ASSERT_EQ(phases % 2, 0) << "bundle " << b;
      const int64_t first_example = n;
      int64_t variables = 0;
      // Phases 2k and 2k + 1 cover example first_example + k's regions, each kind as one range.
      for (int64_t k = 0; k < phases / 2; ++k, ++n) {
        ASSERT_LT(n, data.num_examples());
        variables += data.var_offset[n + 1] - data.var_offset[n];
        for (int64_t half = 0; half < 2; ++half) {
          const int64_t p = first_phase + 2 * k + half;
          const bool factors = half == 1;
          const int64_t* offset = factors ? data.factor_offset.data() : data.var_offset.data();
          int64_t next = offset[n];
          for (int64_t c = plan.phase_ptr[p]; c < plan.phase_ptr[p + 1]; ++c) {
            EXPECT_EQ(plan.chunks[c].begin, next) << "example " << n << " chunk " << c;
            next = plan.chunks[c].end;
          }
          EXPECT_EQ(next, offset[n + 1]) << "example " << n << (factors ? " factors" : " vars");
        }
      }
      EXPECT_TRUE(n - first_example == 1 || variables <= kBundleVariables) << "bundle " << b;
    }
    EXPECT_EQ(n, data.num_examples());
  }
}

}  // namespace
}  // namespace pdsp
