// The implicit slot index of regular graphs against the stored one.
#include "pdsp/inference/factor_graph.hpp"

#include <gtest/gtest.h>

#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

void expect_same_slots(const Dataset& data) {
  const FactorGraph implicit(data);
  const FactorGraph stored(data, "test", FactorGraph::Form::Explicit);
  ASSERT_TRUE(implicit.is_regular());
  ASSERT_FALSE(stored.is_regular());
  ASSERT_EQ(implicit.num_slots(), stored.num_slots());
  EXPECT_EQ(implicit.num_message_entries(), stored.num_message_entries());
  EXPECT_EQ(implicit.max_table, stored.max_table);
  for (int64_t e = 0; e <= stored.num_slots(); ++e)
    EXPECT_EQ(implicit.message_offset(e), stored.message_offset(e)) << "slot " << e;
  for (int64_t e = 0; e < stored.num_slots(); ++e) {
    EXPECT_EQ(implicit.factor_of(e), stored.factor_of(e)) << "slot " << e;
    EXPECT_EQ(implicit.stride_of(e), stored.stride_of(e)) << "slot " << e;
  }
  EXPECT_EQ(implicit.var_slots, stored.var_slots);
}

TEST(FactorGraph, RegularGraphsComputeWhatTheStoredIndexHolds) {
  // Binary grids and chains, including 8-connected ones.
  expect_same_slots(testing::random_dataset(
      {testing::grid_shape(4, 5), testing::grid_shape(3, 3, true), testing::chain_shape(6)}, 3, 1));
  // Ternary variables: strides 3 and 1.
  testing::GraphShape ternary = testing::grid_shape(3, 4);
  for (int32_t& card : ternary.cards) card = 3;
  expect_same_slots(testing::random_dataset({ternary}, 3, 2));
}

TEST(FactorGraph, MixedArityOrCardinalityIsStored) {
  EXPECT_FALSE(FactorGraph(testing::random_dataset({testing::loopy_shape()}, 3, 3)).is_regular());
  EXPECT_FALSE(FactorGraph(testing::random_dataset({testing::tree_shape()}, 3, 4)).is_regular());
}

}  // namespace
}  // namespace pdsp
