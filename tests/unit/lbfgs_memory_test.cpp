// The L-BFGS memory: the two-loop recursion equals the BFGS inverse-Hessian update computed
// directly as a matrix, keeps only the newest pairs, and rejects pairs without curvature.
#include "pdsp/optim/lbfgs_memory.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace pdsp {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix product(const Matrix& a, const Matrix& b) {
  const size_t n = a.size();
  Matrix c(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k)
      for (size_t j = 0; j < n; ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

std::vector<double> times(const Matrix& a, const std::vector<double>& x) {
  std::vector<double> y(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i)
    y[i] = std::inner_product(a[i].begin(), a[i].end(), x.begin(), 0.0);
  return y;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// From H = H_0, for each pair oldest to newest
// H <- (I - rho s y') H (I - rho y s') + rho s s' (Nocedal & Wright, eq. 6.17).
Matrix bfgs_inverse(const std::vector<std::vector<double>>& s,
                    const std::vector<std::vector<double>>& y, Matrix h) {
  const size_t n = s[0].size();
  for (size_t p = 0; p < s.size(); ++p) {
    const double rho = 1.0 / dot(s[p], y[p]);
    Matrix left(n, std::vector<double>(n)), right(n, std::vector<double>(n));
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) {
        left[i][j] = (i == j) - rho * s[p][i] * y[p][j];
        right[i][j] = (i == j) - rho * y[p][i] * s[p][j];
      }
    h = product(product(left, h), right);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) h[i][j] += rho * s[p][i] * s[p][j];
  }
  return h;
}

// H_0 = (s'y / y'y) I of the newest pair.
Matrix bfgs_inverse(const std::vector<std::vector<double>>& s,
                    const std::vector<std::vector<double>>& y) {
  const size_t n = s[0].size();
  const double gamma = dot(s.back(), y.back()) / dot(y.back(), y.back());
  Matrix h(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) h[i][i] = gamma;
  return bfgs_inverse(s, y, h);
}

TEST(LbfgsMemory, TwoLoopRecursionEqualsTheDirectInverseUpdateOnAQuadratic) {
  const size_t n = 6;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  // F(x) = x'Ax/2 with A = B'B + I: its gradient change along s is y = A s.
  Matrix b(n, std::vector<double>(n)), a(n, std::vector<double>(n, 0.0));
  for (auto& row : b)
    for (double& x : row) x = normal(rng);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      for (size_t k = 0; k < n; ++k) a[i][j] += b[k][i] * b[k][j];
      a[i][j] += i == j;
    }
  const int capacity = 4;
  LbfgsMemory memory;
  std::vector<std::vector<double>> steps, changes;
  std::vector<double> x(n), g(n);
  for (double& v : x) v = normal(rng);
  for (int k = 0; k < 7; ++k) {
    g = times(a, x);
    std::vector<double> s(n);
    for (double& v : s) v = normal(rng);
    memory.remember_step(s, g);
    for (size_t i = 0; i < n; ++i) x[i] += s[i];
    ASSERT_TRUE(memory.complete_pair(times(a, x), capacity)) << "pair " << k;
    steps.push_back(s);
    changes.push_back(times(a, s));
  }
  ASSERT_EQ(memory.pairs(n), capacity);
  // Only the newest `capacity` pairs count.
  steps.erase(steps.begin(), steps.end() - capacity);
  changes.erase(changes.begin(), changes.end() - capacity);
  const Matrix h = bfgs_inverse(steps, changes);

  std::vector<double> probe(n), direction(n);
  for (double& v : probe) v = normal(rng);
  memory.direction(probe, direction);
  const std::vector<double> expected = times(h, probe);
  for (size_t i = 0; i < n; ++i)
    EXPECT_NEAR(direction[i], -expected[i], 1e-12 * (1 + std::abs(expected[i]))) << i;
  // The secant equation of the newest pair: H y = s.
  memory.direction(changes.back(), direction);
  for (size_t i = 0; i < n; ++i) EXPECT_NEAR(-direction[i], steps.back()[i], 1e-12) << i;
}

// With a curvature model P (here diagonal), H_0 is gamma P^{-1} with gamma = s'y / y'P^{-1}y of
// the newest pair, or P^{-1} itself when the model is not to be rescaled.
TEST(LbfgsMemory, ACurvatureModelGivesH0ScaledOrAsItIs) {
  const size_t n = 4;
  const std::vector<double> model = {2.0, 0.5, 8.0, 1.0};  // P's diagonal
  const InverseCurvature inverse = [&](std::span<const double> in, std::span<double> out) {
    for (size_t i = 0; i < n; ++i) out[i] = in[i] / model[i];
  };
  LbfgsMemory memory;
  const std::vector<double> g0 = {1.0, -1.0, 0.5, 2.0}, s = {0.3, 0.1, -0.2, 0.4},
                            g1 = {1.9, -0.7, -0.4, 2.6};
  memory.remember_step(s, g0);
  ASSERT_TRUE(memory.complete_pair(g1, 5));
  std::vector<double> y(n), scaled_y(n);
  for (size_t i = 0; i < n; ++i) y[i] = g1[i] - g0[i];
  inverse(y, scaled_y);
  const double gamma = dot(s, y) / dot(y, scaled_y);
  ASSERT_GT(std::abs(gamma - 1.0), 0.1) << "the two cases must differ";
  for (const bool rescale : {true, false}) {
    Matrix h0(n, std::vector<double>(n, 0.0));
    for (size_t i = 0; i < n; ++i) h0[i][i] = (rescale ? gamma : 1.0) / model[i];
    const Matrix h = bfgs_inverse({s}, {y}, h0);
    std::vector<double> direction(n);
    memory.direction(g1, direction, inverse, rescale);
    const std::vector<double> expected = times(h, g1);
    for (size_t i = 0; i < n; ++i)
      EXPECT_NEAR(direction[i], -expected[i], 1e-12 * (1 + std::abs(expected[i])))
          << (rescale ? "rescaled, " : "as it is, ") << i;
  }
}

// A memory read with more pairs than the run keeps drops its oldest; a full one overwrites the
// slot of its oldest pair, and the pairs stay in order, oldest first.
TEST(LbfgsMemory, KeepsTheNewestPairsInOrderWhateverSlotTheyAreIn) {
  const size_t n = 2;
  LbfgsMemory memory;
  memory.s = {1, 0, 2, 0, 3, 0};  // three pairs, s_k = (k, 0), y_k = (k, 1)
  memory.y = {1, 1, 2, 1, 3, 1};
  memory.recompute_curvatures(n);
  auto add_pair = [&](double k) {
    memory.remember_step(std::vector<double>{k, 0.0}, std::vector<double>{0.0, 0.0});
    return memory.complete_pair(std::vector<double>{k, 1.0}, 2);
  };
  auto firsts = [&] {
    std::vector<double> out;
    for (int i = 0; i < memory.pairs(n); ++i) {
      EXPECT_EQ(memory.pair_y(i, n)[0], memory.pair_s(i, n)[0]);
      out.push_back(memory.pair_s(i, n)[0]);
    }
    return out;
  };
  ASSERT_TRUE(add_pair(4));  // down to 2 and 3, then 4 over 2
  EXPECT_EQ(firsts(), (std::vector<double>{3, 4}));
  EXPECT_EQ(memory.s, (std::vector<double>{4, 0, 3, 0})) << "the oldest slot overwritten";
  EXPECT_EQ(memory.oldest, 1);
  ASSERT_TRUE(add_pair(5));
  EXPECT_EQ(firsts(), (std::vector<double>{4, 5}));
  EXPECT_EQ(memory.oldest, 0);
  ASSERT_TRUE(add_pair(6));
  EXPECT_EQ(firsts(), (std::vector<double>{5, 6}));
  EXPECT_EQ(memory.s, (std::vector<double>{6, 0, 5, 0}));
  // The cached s'y of each slot is what a reader recomputes.
  LbfgsMemory recomputed = memory;
  recomputed.recompute_curvatures(n);
  EXPECT_EQ(recomputed.curvatures, memory.curvatures);
  EXPECT_EQ(memory.curvatures, (std::vector<double>{36, 25}));  // k^2, slot by slot
  // Pairs set by hand, without the cache, give the same direction bitwise.
  LbfgsMemory by_hand;
  by_hand.s = memory.s;
  by_hand.y = memory.y;
  by_hand.oldest = memory.oldest;
  const std::vector<double> g = {0.5, -2.0};
  std::vector<double> cached_direction(n), by_hand_direction(n);
  memory.direction(g, cached_direction);
  by_hand.direction(g, by_hand_direction);
  EXPECT_EQ(by_hand_direction, cached_direction);
  memory.clear();
  EXPECT_EQ(memory.oldest, 0);
}

// Reserved once, the memory takes pairs, wraps and keeps taking them in the same storage: no
// pair moves and nothing of the model's size is allocated in an iteration.
TEST(LbfgsMemory, AReservedMemoryKeepsItsStorageAsItFillsAndWraps) {
  const size_t n = 5;
  const int capacity = 3;
  LbfgsMemory memory;
  memory.reserve(n, capacity);
  const double* s = memory.s.data();
  const double* y = memory.y.data();
  const double* step = memory.step.data();
  const double* gradient = memory.gradient.data();
  std::vector<double> g(n), d(n);
  for (int k = 1; k <= 4 * capacity; ++k) {
    for (size_t r = 0; r < n; ++r) g[r] = k * (static_cast<double>(r) + 1.0);
    memory.remember_step(std::vector<double>(n, 1.0), std::vector<double>(n, 0.0));
    ASSERT_TRUE(memory.complete_pair(g, capacity)) << "pair " << k;
    memory.direction(g, d);
    EXPECT_EQ(memory.pairs(n), std::min(k, capacity));
    EXPECT_EQ(memory.s.data(), s) << "pair " << k;
    EXPECT_EQ(memory.y.data(), y) << "pair " << k;
    EXPECT_EQ(memory.step.data(), step);
    EXPECT_EQ(memory.gradient.data(), gradient);
  }
  // The newest pair's y is the last gradient change: g itself (from a gradient of 0).
  EXPECT_EQ(std::vector<double>(memory.pair_y(capacity - 1, n).begin(),
                                memory.pair_y(capacity - 1, n).end()),
            g);
}

TEST(LbfgsMemory, WithoutPairsTheDirectionIsMinusTheGradient) {
  const std::vector<double> g = {1.5, -2.0, 0.25};
  std::vector<double> d(3);
  LbfgsMemory().direction(g, d);
  EXPECT_EQ(d, (std::vector<double>{-1.5, 2.0, -0.25}));
}

TEST(LbfgsMemory, RejectsPairsWithoutClearlyPositiveCurvature) {
  LbfgsMemory memory;
  const std::vector<double> g = {1.0, 2.0, 3.0}, s = {0.5, -0.5, 1.0};
  // y = -s: the gradient fell along the step (negative curvature).
  memory.remember_step(s, g);
  EXPECT_FALSE(memory.complete_pair(std::vector<double>{0.5, 2.5, 2.0}, 10));
  // y orthogonal to s up to round-off.
  memory.remember_step(s, g);
  EXPECT_FALSE(memory.complete_pair(std::vector<double>{2.0, 3.0, 3.0}, 10));
  EXPECT_EQ(memory.pairs(3), 0);
  EXPECT_TRUE(memory.step.empty()) << "a rejected pair leaves no pending step";
  // Without a pending step there is no pair to form.
  EXPECT_FALSE(memory.complete_pair(g, 10));
  memory.remember_step(s, g);
  EXPECT_TRUE(memory.complete_pair(std::vector<double>{1.5, 1.5, 4.0}, 10));
  EXPECT_EQ(memory.pairs(3), 1);
  memory.clear();
  EXPECT_EQ(memory.pairs(3), 0);
}

}  // namespace
}  // namespace pdsp
