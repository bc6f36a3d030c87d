#include "pdsp/data/partition.hpp"

#include <gtest/gtest.h>

#include "pdsp/util/errors.hpp"

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

// Each rank's slice as "first-last" for whole examples, "eN/k of S" for shard k of example N, or
// "eN-M/k of S" for shard k of examples N..M split as one.
std::vector<std::string> slices_of(const std::vector<RankSlice>& slices) {
  std::vector<std::string> text;
  for (const RankSlice& s : slices) {
    std::string line;
    if (s.shards == 1) {
      line.append(std::to_string(s.first)).append("-").append(std::to_string(s.last));
    } else {
      line.append("e").append(std::to_string(s.first));
      if (s.last - s.first > 1) line.append("-").append(std::to_string(s.last - 1));
      line.append("/");
      line.append(std::to_string(s.shard)).append(" of ").append(std::to_string(s.shards));
    }
    text.push_back(line);
  }
  return text;
}

using Slices = std::vector<std::string>;

TEST(RankSlices, OneExampleOnTwoRanksIsSplitUnlessToldNot) {
  EXPECT_EQ(slices_of(plan_rank_slices({5.0}, {100}, 2, 0)), (Slices{"e0/0 of 2", "e0/1 of 2"}));
  EXPECT_EQ(slices_of(plan_rank_slices({5.0}, {100}, 2, 2)), (Slices{"e0/0 of 2", "e0/1 of 2"}));
  EXPECT_EQ(slices_of(plan_rank_slices({5.0}, {100}, 2, 1)), (Slices{"0-0", "0-1"}));
  EXPECT_EQ(slices_of(plan_rank_slices({5.0}, {100}, 1, 0)), (Slices{"0-1"}));
}

TEST(RankSlices, BalancedExamplesStayWhole) {
  const std::vector<double> cost = {1, 1, 1, 1, 1, 1};
  const std::vector<int64_t> vars(6, 10);
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 3, 0)), (Slices{"0-2", "2-4", "4-6"}));
  // A share exceeded by less than 10%: not worth a split.
  EXPECT_EQ(slices_of(plan_rank_slices({1.05, 0.95}, {10, 10}, 2, 0)), (Slices{"0-1", "1-2"}));
}

TEST(RankSlices, ALargeExampleAmongSmallOnesGetsRanksByCost) {
  // Costs 1 + 6 + 1: the large one and each run of small examples around it need a rank of
  // their own. With 2 ranks there are too few, with 3 the large one would have one rank alone:
  // all three are split as one (hybrid: a rank holds part of the large one and a small one).
  const std::vector<double> cost = {1, 6, 1};
  const std::vector<int64_t> vars = {10, 60, 10};
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 2, 0)), (Slices{"e0-2/0 of 2", "e0-2/1 of 2"}));
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 3, 0)),
            (Slices{"e0-2/0 of 3", "e0-2/1 of 3", "e0-2/2 of 3"}));
  EXPECT_EQ(describe_rank_slices(plan_rank_slices(cost, vars, 2, 0)),
            "examples 0-2 as one in 2 shards on ranks 0-1");
  // Forced shards keep examples whole when they do not fit; 1 never splits.
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 2, 1)), (Slices{"0-1", "1-3"}));
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 4, 0)),
            (Slices{"0-1", "e1/0 of 2", "e1/1 of 2", "2-3"}));
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 8, 0)),
            (Slices{"0-1", "e1/0 of 6", "e1/1 of 6", "e1/2 of 6", "e1/3 of 6", "e1/4 of 6",
                    "e1/5 of 6", "2-3"}));
  EXPECT_EQ(slices_of(plan_rank_slices(cost, vars, 4, 2)),
            (Slices{"0-1", "e1/0 of 2", "e1/1 of 2", "2-3"}));
  // Uneven examples, the large one last: its share of 3 ranks is two.
  EXPECT_EQ(slices_of(plan_rank_slices({1, 1, 4}, {10, 10, 40}, 3, 0)),
            (Slices{"0-2", "e2/0 of 2", "e2/1 of 2"}));
}

TEST(RankSlices, NoMoreShardsThanVariablesAndEmptyRanksWhenNothingCanUseThem) {
  // Two examples of 2 variables on 6 ranks: at most 2 shards each, two ranks hold nothing.
  EXPECT_EQ(slices_of(plan_rank_slices({1, 1}, {2, 2}, 6, 0)),
            (Slices{"e0/0 of 2", "e0/1 of 2", "e1/0 of 2", "e1/1 of 2", "2-2", "2-2"}));
  EXPECT_EQ(slices_of(plan_rank_slices({1}, {3}, 4, 0)),
            (Slices{"e0/0 of 3", "e0/1 of 3", "e0/2 of 3", "1-1"}));
  EXPECT_EQ(describe_rank_slices(plan_rank_slices({1}, {3}, 4, 0)),
            "example 0 in 3 shards on ranks 0-2; nothing on 1 rank(s)");
}

TEST(RankSlices, ForcedShardsThatDoNotFitAreOneClearLine) {
  const auto error_of = [](auto&& plan) {
    try {
      plan();
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of([] {
              plan_rank_slices({1, 6, 1}, {10, 60, 10}, 4, 3);
            }),
            "--shards 3: the large examples need 5 ranks and the run has 4");
  EXPECT_EQ(error_of([] { plan_rank_slices({1}, {3}, 4, 4); }),
            "--shards 4: example 0 has 3 variables: at most one shard per variable");
}

}  // namespace
}  // namespace pdsp
