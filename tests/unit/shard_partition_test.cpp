// One example split into shards: grids into rectangles, other graphs by METIS.
#include "pdsp/inference/shard_partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "pdsp/util/errors.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

// Example 1 of a data set whose example 0 is a small chain, so local ids are tested.
Dataset second_example(const testing::GraphShape& shape) {
  return testing::random_dataset({testing::chain_shape(3), shape}, 3, 5);
}

// An irregular graph: `n` ternary variables, a ring of pairwise factors (connected) and random
// pairwise and arity-3 factors.
testing::GraphShape irregular_shape(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  testing::GraphShape shape;
  shape.cards.assign(static_cast<size_t>(n), 3);
  for (int64_t v = 0; v < n; ++v) shape.factors.push_back({v, (v + 1) % n});
  for (int k = 0; k < n; ++k) {
    std::vector<int64_t> vars = {pick(rng), pick(rng), pick(rng)};
    std::sort(vars.begin(), vars.end());
    if (std::unique(vars.begin(), vars.end()) != vars.end()) continue;
    if (k % 2 == 0) vars.pop_back();
    shape.factors.push_back(vars);
  }
  return shape;
}

TEST(FindGrid, FindsFourAndEightConnectedGridsAndNothingElse) {
  const GridShape four = find_grid(second_example(testing::grid_shape(5, 7)), 1);
  EXPECT_EQ(four.rows, 5);
  EXPECT_EQ(four.cols, 7);
  EXPECT_FALSE(four.diagonals);
  const GridShape eight = find_grid(second_example(testing::grid_shape(6, 4, true)), 1);
  EXPECT_EQ(eight.rows, 6);
  EXPECT_EQ(eight.cols, 4);
  EXPECT_TRUE(eight.diagonals);
  // Unary factors do not matter.
  testing::GraphShape with_unary = testing::grid_shape(3, 3);
  for (int64_t v = 0; v < 9; ++v) with_unary.factors.push_back({v});
  EXPECT_EQ(find_grid(second_example(with_unary), 1).cols, 3);

  testing::GraphShape missing = testing::grid_shape(4, 4);
  missing.factors.erase(missing.factors.begin() + 5);
  testing::GraphShape doubled = testing::grid_shape(4, 4);
  doubled.factors.push_back(doubled.factors[3]);
  doubled.factors.erase(doubled.factors.begin() + 4);
  testing::GraphShape wrapping = testing::grid_shape(4, 4);
  wrapping.factors.push_back({3, 4});  // the end of row 0 to the start of row 1
  for (const auto& shape : {missing, doubled, wrapping, testing::chain_shape(8),
                            testing::loopy_shape(), testing::tree_shape()})
    EXPECT_EQ(find_grid(second_example(shape), 1).rows, 0);
}

TEST(PartitionExample, CutsAGridIntoRectanglesWithTheShortestCut) {
  const Dataset square = second_example(testing::grid_shape(12, 12));
  const ShardPartition four = partition_example(square, 1, 2, 4, "g.h5");
  EXPECT_EQ(four.method, "grid blocks 2x2 of 12x12");
  EXPECT_EQ(four.variables, (std::vector<int64_t>{36, 36, 36, 36}));
  EXPECT_EQ(four.cut_factors, 24);  // one row and one column of factors
  // A wide grid is cut into column bands, a tall one into row bands of 4, 4 and 3 rows.
  const Dataset wide = second_example(testing::grid_shape(11, 30));
  const ShardPartition three = partition_example(wide, 1, 2, 3, "g.h5");
  EXPECT_EQ(three.method, "grid blocks 1x3 of 11x30");
  EXPECT_EQ(three.cut_factors, 2 * 11);
  for (int64_t v = 0; v < 330; ++v) EXPECT_EQ(three.shard_of[v], (v % 30) / 10) << v;
  const ShardPartition tall =
      partition_example(second_example(testing::grid_shape(11, 2)), 1, 2, 3, "g.h5");
  EXPECT_EQ(tall.variables, (std::vector<int64_t>{8, 8, 6}));
  EXPECT_EQ(partition_example(square, 1, 2, 1, "g.h5").method, "whole");
}

TEST(PartitionExample, SplitsOtherGraphsWithMetisTheSameWayEveryTime) {
  const int n = 300;
  const Dataset data = second_example(irregular_shape(n, 11));
  const ShardPartition p = partition_example(data, 1, 2, 3, "r.h5");
  EXPECT_EQ(p.method, "metis");
  EXPECT_EQ(partition_example(data, 1, 2, 3, "r.h5").shard_of, p.shard_of);
  ASSERT_EQ(p.shard_of.size(), static_cast<size_t>(n));
  for (int64_t size : p.variables) {
    EXPECT_GT(size, n / 3 / 2);
    EXPECT_LT(size, 2 * n / 3);
  }
  // Far fewer cut factors than shards by position modulo 3, which cuts almost every factor.
  int64_t round_robin = 0;
  const int64_t first = data.var_offset[1];
  for (int64_t a = data.factor_offset[1]; a < data.factor_offset[2]; ++a) {
    const int64_t shard = (data.factor_vars[data.factor_var_ptr[a]] - first) % 3;
    for (int64_t i = data.factor_var_ptr[a] + 1; i < data.factor_var_ptr[a + 1]; ++i)
      if ((data.factor_vars[i] - first) % 3 != shard) {
        ++round_robin;
        break;
      }
  }
  EXPECT_LT(2 * p.cut_factors, round_robin) << p.cut_factors << " vs " << round_robin;
  // A grid whose blocks cannot make 7 shards goes to METIS too.
  EXPECT_EQ(partition_example(second_example(testing::grid_shape(4, 4)), 1, 2, 7, "g.h5").method,
            "metis");
}

TEST(PartitionExample, RejectsImpossibleShardCountsNamingTheExample) {
  const Dataset data = second_example(testing::grid_shape(2, 2));
  try {
    partition_example(data, 1, 2, 5, "g.h5");
    FAIL() << "5 shards for 4 variables";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "g.h5: example 1: 5 shards for its 4 variables: at most one shard per variable");
  }
  EXPECT_THROW(partition_example(data, 1, 2, 0, "g.h5"), InputError);
}

}  // namespace
}  // namespace pdsp
