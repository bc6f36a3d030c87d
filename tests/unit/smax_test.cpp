#include "pdsp/inference/smax.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "pdsp/inference/table_ops.hpp"
#include "pdsp/inference/vector_math.hpp"

namespace pdsp {
namespace {

double naive_smax(const std::vector<double>& x, double tau) {
  double sum = 0;
  for (double v : x) sum += std::exp(v / tau);
  return tau * std::log(sum);
}

TEST(Smax, MatchesTheDefinitionForPositiveAndNegativeTemperatures) {
  const std::vector<double> x = {0.3, -1.2, 2.5, 0.0};
  for (double tau : {2.0, 1.0, 0.5, -0.7, -2.0})
    EXPECT_NEAR(smax(x.data(), 4, tau), naive_smax(x, tau), 1e-12) << "tau " << tau;
}

TEST(Smax, ZeroTemperatureIsTheMaxAndTheLimitOfSmallTemperatures) {
  const std::vector<double> x = {0.3, -1.2, 2.5, 0.0};
  EXPECT_EQ(smax(x.data(), 4, 0.0), 2.5);
  EXPECT_NEAR(smax(x.data(), 4, 1e-4), 2.5, 1e-3);
  EXPECT_NEAR(smax(x.data(), 4, -1e-4), -1.2, 1e-3);  // a soft-min below zero
}

TEST(Smax, StaysFiniteForHugeScores) {
  const std::vector<double> x = {1e6, 1e6 - 1, -1e6};
  EXPECT_NEAR(smax(x.data(), 3, 1.0), 1e6 + std::log(1 + std::exp(-1.0)), 1e-6);
}

// Exponents far below the largest (scores of -1e4 at a trial theta, -inf) are raised to a floor
// before exp (vector_math.hpp's exp_floor), which must leave the sums bitwise as exact zeros
// would: with k other terms of exp(0) = 1 the sum is exactly k in any order. NaN stays NaN.
TEST(Smax, ExponentsFarBelowTheLargestLeaveTheSumBitwiseAsItWas) {
  const double far[] = {-1e4, -800.0, -709.0, -INFINITY, -60.0};
  for (int64_t n : {3, 8, 19}) {
    std::vector<double> x(static_cast<size_t>(n));
    double ones = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool low = i % 3 == 1;
      x[i] = low ? far[i % 5] : 0.0;
      ones += low ? 0 : 1;
    }
    for (double tau : {1.0, 0.5}) {
      const double expected = tau * std::log(ones);
      EXPECT_EQ(smax(x.data(), n, tau), expected) << n << " " << tau;
      // The table as one state's row against n (either variable first), or along a slot of
      // stride 1 or n: every loop of the soft-max kernels.
      std::vector<double> out(1), scratch(1);
      const std::vector<double> zero(static_cast<size_t>(n), 0.0);
      for (const bool first : {true, false}) {
        smax_pairwise(x.data(), 1, n, first, zero.data(), tau, out.data(), scratch.data());
        EXPECT_EQ(out[0], expected) << n << " " << tau << " " << first;
      }
      for (const int64_t stride : {int64_t{1}, n}) {
        smax_along_slot(x.data(), n, 1, stride, tau, out.data(), scratch.data());
        EXPECT_EQ(out[0], expected) << n << " " << tau << " stride " << stride;
      }
    }
    x[0] = NAN;
    EXPECT_TRUE(std::isnan(smax(x.data(), n, 1.0)));
  }
}

// The binary kernels' 1 + exp(-|z|) is as unchanged by the floor as the soft-max sums.
TEST(Smax, OnePlusTheExpOfTheFloorIsOne) {
  EXPECT_EQ(1.0 + std::exp(exp_floor()), 1.0);
  EXPECT_TRUE(std::isnormal(std::exp(exp_floor()))) << "out of libmvec's fallback range";
}

TEST(SoftArgmax, IsTheGradientOfSmax) {
  const std::vector<double> x = {0.3, -1.2, 2.5, 0.0};
  for (double tau : {1.0, 0.3, -0.8}) {
    std::vector<double> b(4);
    soft_argmax(x.data(), 4, tau, b.data());
    for (int i = 0; i < 4; ++i) {
      std::vector<double> up = x, down = x;
      up[i] += 1e-6;
      down[i] -= 1e-6;
      const double derivative = (smax(up.data(), 4, tau) - smax(down.data(), 4, tau)) / 2e-6;
      EXPECT_NEAR(b[i], derivative, 1e-7) << "tau " << tau << " i " << i;
    }
  }
}

TEST(SoftArgmax, ZeroTemperatureSpreadsOverTies) {
  const std::vector<double> x = {1.0, 3.0, 3.0, 2.0};
  std::vector<double> b(4);
  soft_argmax(x.data(), 4, 0.0, b.data());
  EXPECT_EQ(b, (std::vector<double>{0.0, 0.5, 0.5, 0.0}));
}

TEST(Entropy, OfUniformIsLogN) {
  const std::vector<double> p = {0.25, 0.25, 0.25, 0.25};
  EXPECT_NEAR(entropy(p.data(), 4), std::log(4.0), 1e-15);
}

// A 2 x 3 x 2 table; the slot kernels must agree with explicit index arithmetic, at positive,
// negative and zero temperature, along every slot (strides 6, 2 and 1 take different loops).
TEST(TableOps, SlotKernelsAgreeWithExplicitIndexing) {
  const int64_t cards[3] = {2, 3, 2}, strides[3] = {6, 2, 1};
  std::vector<double> table(12);
  for (int t = 0; t < 12; ++t) table[t] = std::sin(1.7 * t);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> message(static_cast<size_t>(cards[k]));
    for (int s = 0; s < cards[k]; ++s) message[s] = 0.5 * s - 0.2;
    std::vector<double> added = table;
    add_along_slot(added.data(), 12, cards[k], strides[k], message.data());
    const size_t states = static_cast<size_t>(cards[k]);
    std::vector<double> smaxed(states), cold(states), negative(states), summed(states),
        scratch(states);
    smax_along_slot(table.data(), 12, cards[k], strides[k], 0.7, smaxed.data(), scratch.data());
    smax_along_slot(table.data(), 12, cards[k], strides[k], -0.7, negative.data(), scratch.data());
    smax_along_slot(table.data(), 12, cards[k], strides[k], 0.0, cold.data(), scratch.data());
    sum_along_slot(table.data(), 12, cards[k], strides[k], summed.data());
    for (int s = 0; s < cards[k]; ++s) {
      std::vector<double> bucket;
      for (int t = 0; t < 12; ++t) {
        const int64_t state = (t / strides[k]) % cards[k];
        if (state == s) bucket.push_back(table[t]);
        EXPECT_DOUBLE_EQ(added[t], table[t] + message[state]);
      }
      double sum = 0;
      for (double v : bucket) sum += v;
      EXPECT_NEAR(smaxed[s], naive_smax(bucket, 0.7), 1e-12);
      EXPECT_NEAR(negative[s], naive_smax(bucket, -0.7), 1e-12);
      EXPECT_EQ(cold[s], *std::max_element(bucket.begin(), bucket.end()));
      EXPECT_NEAR(summed[s], sum, 1e-12);
    }
  }
}

// A 3 x 4 pairwise table plus the other variable's message, seen from either variable: the
// fused kernel equals the message added to a copy and reduced along the slot.
TEST(TableOps, PairwiseSmaxEqualsAddingTheMessageAndReducingAlongTheSlot) {
  const int64_t cards[2] = {3, 4};
  std::vector<double> table(12);
  for (int t = 0; t < 12; ++t) table[t] = std::cos(1.3 * t) * 3.0;
  for (int side = 0; side < 2; ++side) {
    const int64_t card = cards[side], other = cards[1 - side];
    const int64_t stride = side == 0 ? cards[1] : 1, other_stride = side == 0 ? 1 : cards[1];
    std::vector<double> message(static_cast<size_t>(other));
    for (int64_t t = 0; t < other; ++t) message[t] = 0.4 * static_cast<double>(t) - 0.5;
    std::vector<double> added = table;
    add_along_slot(added.data(), 12, other, other_stride, message.data());
    for (double tau : {0.7, -0.7, 0.0}) {
      std::vector<double> expected(static_cast<size_t>(card)), fused(expected.size()),
          scratch(expected.size());
      smax_along_slot(added.data(), 12, card, stride, tau, expected.data(), scratch.data());
      smax_pairwise(table.data(), card, other, side == 0, message.data(), tau, fused.data(),
                    scratch.data());
      for (int64_t s = 0; s < card; ++s)
        EXPECT_NEAR(fused[s], expected[s], 1e-12) << "side " << side << " tau " << tau;
    }
  }
}

// Both forms of the reductions, below and above a vector's length, over ranges that start
// anywhere: every index visited once, the max exact and the sum to round-off.
TEST(VectorReductions, ShortAndLongRangesGiveTheMaxAndTheSum) {
  std::vector<double> x(3 * kVectorDoubles);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.7 * static_cast<double>(i)) * 10;
  for (int64_t first : {0, 1, 3})
    for (int64_t last = first; last <= static_cast<int64_t>(x.size()); ++last) {
      std::vector<int> visits(x.size(), 0);
      const double m = max_over(first, last, -5.0, [&](int64_t i) {
        ++visits[i];
        return x[i];
      });
      double expected_max = -5.0, expected_sum = 0.0;
      for (int64_t i = first; i < last; ++i) {
        expected_max = std::max(expected_max, x[i]);
        expected_sum += x[i];
        EXPECT_EQ(visits[i], 1) << "index " << i;
      }
      EXPECT_EQ(m, expected_max) << first << ".." << last;
      EXPECT_NEAR(sum_over(first, last, [&](int64_t i) { return x[i]; }), expected_sum, 1e-12)
          << first << ".." << last;
    }
}

}  // namespace
}  // namespace pdsp
