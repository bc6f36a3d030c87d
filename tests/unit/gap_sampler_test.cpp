// Drawing examples in proportion to their gaps: the frequencies follow the weights as they
// change, a weight of 0 is never drawn, and all zeros draw uniformly.
#include "pdsp/optim/gap_sampler.hpp"

#include <gtest/gtest.h>

namespace pdsp {
namespace {

std::vector<double> frequencies(const GapSampler& sampler, size_t n, int draws) {
  std::mt19937_64 rng(3);
  std::vector<double> count(n, 0.0);
  for (int i = 0; i < draws; ++i) count[sampler.draw(rng)] += 1.0 / draws;
  return count;
}

TEST(GapSampler, DrawsInProportionToTheWeights) {
  std::vector<double> weights{1, 0, 3, 0.5, 0, 2.5, -4};  // a negative weight counts as 0
  GapSampler sampler(weights);
  EXPECT_DOUBLE_EQ(sampler.total(), 7.0);
  std::vector<double> f = frequencies(sampler, weights.size(), 200000);
  for (size_t i = 0; i < weights.size(); ++i)
    EXPECT_NEAR(f[i], std::max(weights[i], 0.0) / 7.0, 0.005) << i;
  sampler.set(2, 0.0);
  sampler.set(1, 4.0);
  EXPECT_DOUBLE_EQ(sampler.total(), 8.0);
  f = frequencies(sampler, weights.size(), 200000);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_NEAR(f[1], 0.5, 0.005);
  EXPECT_EQ(f[4], 0.0);
  EXPECT_EQ(f[6], 0.0);
}

TEST(GapSampler, AllZeroDrawsUniformly) {
  GapSampler sampler(std::vector<double>(5, 0.0));
  for (double f : frequencies(sampler, 5, 100000)) EXPECT_NEAR(f, 0.2, 0.01);
}

TEST(GapSampler, OneWeightIsAlwaysDrawn) {
  std::vector<double> weights(13, 0.0);
  weights[12] = 1e-300;
  GapSampler sampler(weights);
  EXPECT_NEAR(frequencies(sampler, 13, 1000)[12], 1.0, 1e-9);
}

}  // namespace
}  // namespace pdsp
