// RegionNumbers keeps one number when every region has it, and reads the same either way;
// --counting auto gives Bethe numbers to the examples without a cycle.
#include "pdsp/inference/counting.hpp"

#include <gtest/gtest.h>

#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

TEST(RegionNumbers, EqualNumbersAreKeptOnceAndReadAsBefore) {
  const RegionNumbers equal(std::vector<double>(5, 0.5));
  ASSERT_NE(equal.shared(), nullptr);
  EXPECT_EQ(*equal.shared(), 0.5);
  EXPECT_EQ(equal.size(), 5);
  EXPECT_EQ(equal[4], 0.5);
  ScratchVector lane(3);
  const double* values = equal.range(1, 4, lane);
  EXPECT_EQ(std::vector<double>(values, values + 3), std::vector<double>(3, 0.5));
  EXPECT_TRUE(equal.any_of([](double c) { return c > 0.4; }));
  EXPECT_FALSE(equal.any_of([](double c) { return c < 0; }));
}

TEST(RegionNumbers, DifferentNumbersAreStored) {
  const RegionNumbers mixed({1.0, -2.0, 3.0});
  EXPECT_EQ(mixed.shared(), nullptr);
  EXPECT_EQ(mixed[1], -2.0);
  ScratchVector lane(2);
  const double* values = mixed.range(1, 3, lane);
  EXPECT_EQ(values[0], -2.0);
  EXPECT_EQ(values[1], 3.0);
  EXPECT_TRUE(mixed.any_of([](double c) { return c < 0; }));
}

TEST(RegionNumbers, OneNumberForEveryRegionNeedsNoVector) {
  const RegionNumbers uniform(4, 1.0);
  ASSERT_NE(uniform.shared(), nullptr);
  EXPECT_EQ(uniform.size(), 4);
  EXPECT_EQ(uniform[3], 1.0);
}

TEST(RegionNumbers, NoRegionsHaveNoNumbers) {
  const RegionNumbers none(std::vector<double>{});
  EXPECT_EQ(none.size(), 0);
  EXPECT_FALSE(none.any_of([](double) { return true; }));
}

}  // namespace
}  // namespace pdsp

namespace pdsp {
namespace {

// Examples: a tree, a 3x3 grid (cycles), a chain, and a tree split in two components.
Dataset mixed_examples() {
  testing::GraphShape forest = testing::chain_shape(3);
  forest.cards.push_back(2);
  forest.cards.push_back(2);
  forest.factors.push_back({3, 4});
  return testing::random_dataset(
      {testing::tree_shape(), testing::grid_shape(3, 3), testing::chain_shape(4), forest}, 3, 1);
}

TEST(AutoCounting, BetheOnExamplesWithoutACycleAndUniformOnTheOthers) {
  const Dataset data = mixed_examples();
  const FactorGraph graph(data);
  const CountingNumbers c = make_counting_numbers(data, graph, CountingMode::Auto, "x", 1.0);
  EXPECT_EQ(c.mode, CountingMode::Auto);
  EXPECT_EQ(c.exact_examples(), 3);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v) {
      const double bethe = 1.0 - static_cast<double>(graph.degree(v));
      EXPECT_EQ(c.var[v], n == 1 ? 1.0 : bethe) << "example " << n << " variable " << v;
    }
  for (int64_t a = 0; a < data.num_factors(); ++a) EXPECT_EQ(c.factor[a], 1.0);
}

TEST(AutoCounting, UniformEverywhereAtEpsilonZeroAndTheFilesNumbersWhenItHasThem) {
  Dataset data = mixed_examples();
  const FactorGraph graph(data);
  const CountingNumbers at_zero = make_counting_numbers(data, graph, CountingMode::Auto, "x", 0.0);
  EXPECT_EQ(at_zero.exact_examples(), 0);
  EXPECT_FALSE(at_zero.var.any_of([](double x) { return x != 1.0; }));
  testing::set_random_counting(data, 0.5, 2.0, 4);
  const CountingNumbers file = make_counting_numbers(data, graph, CountingMode::Auto, "x", 1.0);
  EXPECT_EQ(file.mode, CountingMode::File);
  EXPECT_EQ(file.var[2], data.var_counting[2]);
}

TEST(ExactExamples, AreTheExamplesWithoutACycleWhoseNumbersAreBethesInAnyMode) {
  Dataset data = mixed_examples();
  const FactorGraph graph(data);
  EXPECT_EQ(make_counting_numbers(data, graph, CountingMode::Bethe, "x", 1.0).exact_examples(), 3);
  EXPECT_EQ(make_counting_numbers(data, graph, CountingMode::Uniform, "x", 1.0).exact_examples(),
            0);
  // The file's numbers: Bethe's on every example, then one changed on the first (a tree).
  data.var_counting.resize(static_cast<size_t>(data.num_vars()));
  for (int64_t v = 0; v < data.num_vars(); ++v)
    data.var_counting[v] = 1.0 - static_cast<double>(graph.degree(v));
  data.factor_counting.assign(static_cast<size_t>(data.num_factors()), 1.0);
  data.counted = true;
  EXPECT_EQ(make_counting_numbers(data, graph, CountingMode::File, "x", 1.0).exact_examples(), 3);
  data.var_counting[0] += 0.5;
  EXPECT_EQ(make_counting_numbers(data, graph, CountingMode::File, "x", 1.0).exact_examples(), 2);
}

}  // namespace
}  // namespace pdsp
