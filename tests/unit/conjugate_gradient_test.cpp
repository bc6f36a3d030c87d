// The fixed-step conjugate gradients behind --lbfgs-curvature softmax: exact after n steps on an
// n x n system, b'x = x'Ax > 0 after every step (what keeps L-BFGS's direction a descent), the
// error in A's norm falling with each step, and one step with a perfect preconditioner.
#include "pdsp/optim/conjugate_gradient.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pdsp {
namespace {

constexpr size_t kSize = 6;

// A^{-1} rhs by Gauss-Jordan elimination; A (row-major) is positive definite, so no pivoting.
std::vector<double> eliminate(std::vector<double> m, std::vector<double> rhs) {
  for (size_t p = 0; p < kSize; ++p)
    for (size_t r = 0; r < kSize; ++r) {
      if (r == p) continue;
      const double f = m[r * kSize + p] / m[p * kSize + p];
      for (size_t c = 0; c < kSize; ++c) m[r * kSize + c] -= f * m[p * kSize + c];
      rhs[r] -= f * rhs[p];
    }
  for (size_t r = 0; r < kSize; ++r) rhs[r] /= m[r * kSize + r];
  return rhs;
}

struct System {
  std::vector<double> a, b, solution;  // a row-major, solution = A^{-1} b

  void multiply(std::span<const double> in, std::span<double> out) const {
    for (size_t r = 0; r < kSize; ++r) {
      out[r] = 0;
      for (size_t c = 0; c < kSize; ++c) out[r] += a[r * kSize + c] * in[c];
    }
  }
  double a_norm_error(std::span<const double> x) const {
    std::vector<double> e(kSize), ae(kSize);
    for (size_t r = 0; r < kSize; ++r) e[r] = x[r] - solution[r];
    multiply(e, ae);
    double sum = 0;
    for (size_t r = 0; r < kSize; ++r) sum += e[r] * ae[r];
    return std::sqrt(sum);
  }
};

// A = B'B + I with a badly scaled B, so that a diagonal preconditioner has work to do.
System random_system(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> basis(kSize * kSize);
  for (size_t r = 0; r < kSize; ++r)
    for (size_t c = 0; c < kSize; ++c) basis[r * kSize + c] = normal(rng) * std::pow(3.0, c);
  System s;
  s.a.assign(kSize * kSize, 0.0);
  for (size_t r = 0; r < kSize; ++r)
    for (size_t c = 0; c < kSize; ++c) {
      for (size_t k = 0; k < kSize; ++k)
        s.a[r * kSize + c] += basis[k * kSize + r] * basis[k * kSize + c];
      if (r == c) s.a[r * kSize + c] += 1.0;
    }
  for (size_t r = 0; r < kSize; ++r) s.b.push_back(normal(rng));
  s.solution = eliminate(s.a, s.b);
  return s;
}

std::vector<double> solve(const System& s, int steps, const LinearMap& precondition) {
  std::vector<double> x(kSize, 42.0);  // overwritten: CG starts from 0
  conjugate_gradient(
      steps, [&](std::span<const double> in, std::span<double> out) { s.multiply(in, out); },
      precondition, s.b, x);
  return x;
}

TEST(ConjugateGradient, IsExactAfterAsManyStepsAsUnknownsAndImprovesEveryStep) {
  const System s = random_system(3);
  const LinearMap jacobi = [&](std::span<const double> in, std::span<double> out) {
    for (size_t r = 0; r < kSize; ++r) out[r] = in[r] / s.a[r * kSize + r];
  };
  double last_error = s.a_norm_error(std::vector<double>(kSize, 0.0));
  for (int steps = 1; steps <= static_cast<int>(kSize); ++steps) {
    const std::vector<double> x = solve(s, steps, jacobi);
    std::vector<double> ax(kSize);
    s.multiply(x, ax);
    double bx = 0, xax = 0;
    for (size_t r = 0; r < kSize; ++r) bx += s.b[r] * x[r], xax += x[r] * ax[r];
    EXPECT_GT(bx, 0) << steps << " steps";
    EXPECT_NEAR(bx, xax, 1e-9 * xax) << steps << " steps";
    const double error = s.a_norm_error(x);
    EXPECT_LT(error, last_error) << steps << " steps";
    last_error = error;
  }
  EXPECT_LT(last_error, 1e-8 * s.a_norm_error(std::vector<double>(kSize, 0.0)));
}

TEST(ConjugateGradient, OneStepWithTheExactInverseAsPreconditionerSolves) {
  const System s = random_system(8);
  const LinearMap exact = [&](std::span<const double> in, std::span<double> out) {
    const std::vector<double> solved = eliminate(s.a, {in.begin(), in.end()});
    std::copy(solved.begin(), solved.end(), out.begin());
  };
  const std::vector<double> x = solve(s, 1, exact);
  for (size_t r = 0; r < kSize; ++r)
    EXPECT_NEAR(x[r], s.solution[r], 1e-8 * std::max(1.0, std::abs(s.solution[r]))) << r;
}

}  // namespace
}  // namespace pdsp
