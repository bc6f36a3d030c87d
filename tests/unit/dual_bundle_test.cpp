// The eps = 0 dual bundle: its bound is the best D_0 over the mixtures of its points (checked
// against every support of a small bundle solved exactly), a full bundle keeps its best mixture
// while it drops and merges points, and bundles written as a ring are put in order.
#include "pdsp/optim/dual_bundle.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pdsp {
namespace {

constexpr size_t kParams = 8;

struct Points {
  std::vector<std::vector<double>> z;
  std::vector<double> loss;
};

Points random_points(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 5.0);
  Points p;
  for (size_t k = 0; k < count; ++k) {
    std::vector<double> z(kParams);
    for (double& x : z) x = 2.0 * normal(rng);
    p.z.push_back(z);
    p.loss.push_back(uniform(rng));
  }
  return p;
}

std::vector<double> offset_d() {
  std::vector<double> d(kParams);
  for (size_t r = 0; r < kParams; ++r) d[r] = 0.3 * static_cast<double>(r) - 1.0;
  return d;
}

// D_0 at omega for p = 2: sum omega_k loss_k - |sum omega_k z_k - d|^2 / (2C).
double quadratic_d0(const std::vector<double>& omega, const Points& p, const std::vector<double>& d,
                    double C) {
  std::vector<double> w(kParams, 0.0);
  double loss = 0;
  for (size_t k = 0; k < omega.size(); ++k) {
    loss += omega[k] * p.loss[k];
    for (size_t r = 0; r < kParams; ++r) w[r] += omega[k] * p.z[k][r];
  }
  double norm2 = 0;
  for (size_t r = 0; r < kParams; ++r) norm2 += (w[r] - d[r]) * (w[r] - d[r]);
  return loss - norm2 / (2.0 * C);
}

// Solves A x = b by Gaussian elimination with partial pivoting; false when A is singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row)
      if (std::abs(a[row][col]) > std::abs(a[pivot][col])) pivot = row;
    if (std::abs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (size_t row = col + 1; row < n; ++row) {
      const double factor = a[row][col] / a[col][col];
      for (size_t k = col; k < n; ++k) a[row][k] -= factor * a[col][k];
      b[row] -= factor * b[col];
    }
  }
  x.assign(n, 0.0);
  for (size_t row = n; row-- > 0;) {
    double sum = b[row];
    for (size_t k = row + 1; k < n; ++k) sum -= a[row][k] * x[k];
    x[row] = sum / a[row][row];
  }
  return true;
}

// The maximum of the p = 2 D_0 over the simplex by brute force: for every support S, the
// stationary point of D_0 on {sum omega = 1, omega = 0 off S} (a linear system with the
// multiplier of the sum), kept when it is non-negative.
double best_mixture_by_supports(const Points& p, const std::vector<double>& d, double C) {
  const size_t k = p.loss.size();
  std::vector<std::vector<double>> gram(k, std::vector<double>(k, 0.0));
  std::vector<double> gd(k, 0.0);
  for (size_t a = 0; a < k; ++a)
    for (size_t r = 0; r < kParams; ++r) {
      gd[a] += (p.z[a][r] - d[r]);
      for (size_t b = 0; b < k; ++b) gram[a][b] += (p.z[a][r] - d[r]) * (p.z[b][r] - d[r]);
    }
  double best = -INFINITY;
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<size_t> support;
    for (size_t a = 0; a < k; ++a)
      if (mask & (1u << a)) support.push_back(a);
    const size_t n = support.size();
    // Stationarity: loss_S - G_SS omega / C - nu = 0, and sum omega = 1.
    std::vector<std::vector<double>> system(n + 1, std::vector<double>(n + 1, 0.0));
    std::vector<double> rhs(n + 1, 0.0), x;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) system[i][j] = gram[support[i]][support[j]] / C;
      system[i][n] = 1.0;
      rhs[i] = p.loss[support[i]];
      system[n][i] = 1.0;
    }
    rhs[n] = 1.0;
    if (!solve(system, rhs, x)) continue;
    std::vector<double> omega(k, 0.0);
    bool feasible = true;
    for (size_t i = 0; i < n; ++i) {
      if (x[i] < -1e-12) feasible = false;
      omega[support[i]] = std::max(0.0, x[i]);
    }
    if (feasible) best = std::max(best, quadratic_d0(omega, p, d, C));
  }
  return best;
}

double bundle_value(const DualBundle& bundle, const std::vector<double>& d, double C) {
  Points kept;
  for (size_t k = 0; k < bundle.size(); ++k) {
    kept.z.emplace_back(bundle.moments.begin() + static_cast<std::ptrdiff_t>(k * kParams),
                        bundle.moments.begin() + static_cast<std::ptrdiff_t>((k + 1) * kParams));
    kept.loss.push_back(bundle.losses[k]);
  }
  return quadratic_d0(bundle.weights, kept, d, C);
}

TEST(DualBundle, BoundIsTheBestMixtureFoundByEnumeratingSupports) {
  const Points points = random_points(7, 11);
  const std::vector<double> d = offset_d();
  const double C = 0.7;
  DualBundle bundle;
  Points so_far;
  for (size_t k = 0; k < points.loss.size(); ++k) {
    so_far.z.push_back(points.z[k]);
    so_far.loss.push_back(points.loss[k]);
    const double bound = bundle.add(points.z[k], points.loss[k], d, Regularizer{C, 2.0}, 64);
    const double reference = best_mixture_by_supports(so_far, d, C);
    EXPECT_NEAR(bound, reference, 1e-9 * std::max(1.0, std::abs(reference))) << "point " << k;
  }
}

TEST(DualBundle, OtherNormsReachTheBestMixtureOfAFineGrid) {
  const Points points = random_points(3, 5);
  const std::vector<double> d = offset_d();
  const Regularizer regularizer{0.7, 1.5};
  DualBundle bundle;
  double bound = -INFINITY;
  for (size_t k = 0; k < 3; ++k)
    bound = bundle.add(points.z[k], points.loss[k], d, regularizer, 64);
  double grid_best = -INFINITY;
  const int steps = 400;
  for (int i = 0; i <= steps; ++i)
    for (int j = 0; i + j <= steps; ++j) {
      const double omega[3] = {i / double(steps), j / double(steps),
                               (steps - i - j) / double(steps)};
      std::vector<double> w(kParams, 0.0);
      double loss = 0;
      for (size_t k = 0; k < 3; ++k) {
        loss += omega[k] * points.loss[k];
        for (size_t r = 0; r < kParams; ++r) w[r] += omega[k] * points.z[k][r];
      }
      for (size_t r = 0; r < kParams; ++r) w[r] -= d[r];
      grid_best = std::max(grid_best, loss - regularizer.conjugate(w));
    }
  EXPECT_GE(bound, grid_best - 1e-6 * std::abs(grid_best));
}

// Thirty points through a bundle of four: points without weight leave, the lightest merge, and
// the best mixture never falls; the bound is a mixture of the points, so below their optimum.
TEST(DualBundle, AFullBundleKeepsItsBestMixtureAndNeverLosesBound) {
  const Points points = random_points(30, 3);
  const std::vector<double> d = offset_d();
  const double C = 0.2;
  DualBundle bundle;
  double last = -INFINITY;
  bool merged = false;
  for (size_t k = 0; k < points.loss.size(); ++k) {
    const double bound = bundle.add(points.z[k], points.loss[k], d, Regularizer{C, 2.0}, 4);
    ASSERT_LE(bundle.size(), 4u);
    double sum = 0;
    for (double w : bundle.weights) {
      EXPECT_GE(w, 0.0);
      sum += w;
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    const double current = bundle_value(bundle, d, C);
    EXPECT_NEAR(current, bound, 1e-9 * std::abs(bound)) << "point " << k;
    EXPECT_GE(current, last - 1e-9 * std::abs(last)) << "point " << k;
    last = current;
    for (size_t j = 0; j < bundle.size(); ++j) {
      bool original = false;
      for (size_t i = 0; i <= k; ++i)
        original = original ||
                   std::equal(points.z[i].begin(), points.z[i].end(),
                              bundle.moments.begin() + static_cast<std::ptrdiff_t>(j * kParams));
      merged = merged || !original;
    }
  }
  EXPECT_TRUE(merged) << "the case must make the bundle merge points";
  // The optimum over all thirty, from a bundle that keeps them all (checked against the
  // enumeration of supports above on fewer points).
  DualBundle whole;
  double optimum = -INFINITY;
  for (size_t k = 0; k < points.loss.size(); ++k)
    optimum = whole.add(points.z[k], points.loss[k], d, Regularizer{C, 2.0}, 64);
  EXPECT_LE(last, optimum + 1e-9 * std::abs(optimum));
}

TEST(DualBundle, KeepsUpTo64PointsAnd128MiBOfMoments) {
  EXPECT_EQ(dual_bundle_capacity(3276), 64);
  EXPECT_EQ(dual_bundle_capacity(624074), 26);
  EXPECT_EQ(dual_bundle_capacity(int64_t{1} << 30), 2);
}

TEST(DualBundle, ARingIsPutOldestFirstWithTheNewestWeighted) {
  DualBundle bundle;
  bundle.losses = {10, 11, 12};  // written at ring positions 0, 1, 2; the oldest is at 1
  bundle.moments = {0, 10, 1, 11, 2, 12};
  ring_bundle_in_order(bundle, 1, 2);
  EXPECT_EQ(bundle.losses, (std::vector<double>{11, 12, 10}));
  EXPECT_EQ(bundle.moments, (std::vector<double>{1, 11, 2, 12, 0, 10}));
  EXPECT_EQ(bundle.weights, (std::vector<double>{0, 0, 1}));
}

}  // namespace
}  // namespace pdsp
