// RegionNumbers keeps one number when every region has it, and reads the same either way.
#include "pdsp/inference/counting.hpp"

#include <gtest/gtest.h>

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
