#include "pdsp/data/partition.hpp"

#include <gtest/gtest.h>

namespace pdsp {
namespace {

TEST(Partition, BoundariesFollowTheCumulativeCost) {
  const std::vector<double> cost = {1, 1, 1, 1, 1, 1};
  EXPECT_EQ(partition_by_cost(cost, 2), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(partition_by_cost(cost, 3), (std::vector<int64_t>{0, 2, 4, 6}));
}

TEST(Partition, OneLargeExampleGetsARankOfItsOwn) {
  const std::vector<double> cost = {1, 1, 10, 1, 1};
  const std::vector<int64_t> bounds = partition_by_cost(cost, 3);
  // The large example cannot be split, so the imbalance is its cost over the mean part.
  EXPECT_DOUBLE_EQ(partition_imbalance(cost, bounds), 10.0 * 3 / 14);
}

TEST(Partition, ImbalanceIsOneForAnEvenSplitAndForNoWork) {
  const std::vector<double> cost = {2, 2, 2, 2};
  EXPECT_DOUBLE_EQ(partition_imbalance(cost, partition_by_cost(cost, 2)), 1.0);
  EXPECT_DOUBLE_EQ(partition_imbalance({}, partition_by_cost({}, 2)), 1.0);
}

TEST(Partition, MoreRanksThanExamplesLeavesEmptyParts) {
  const std::vector<double> cost = {3, 1};
  const std::vector<int64_t> bounds = partition_by_cost(cost, 4);
  EXPECT_EQ(bounds.front(), 0);
  EXPECT_EQ(bounds.back(), 2);
  EXPECT_DOUBLE_EQ(partition_imbalance(cost, bounds), 3.0 * 4 / 4);
}

}  // namespace
}  // namespace pdsp
