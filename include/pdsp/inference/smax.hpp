#pragma once
// The soft-max with temperature, smax_tau(x) = tau * log sum_i exp(x_i / tau), and the matching
// soft-argmax distribution. One kernel serves every temperature: tau > 0 is a smoothed max,
// tau == 0 the max itself (and the uniform distribution over the arg-max set), tau < 0 a
// smoothed min (negative counting numbers). All forms subtract the extreme value first.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "pdsp/inference/vector_math.hpp"

namespace pdsp {

// Two values closer than this (relative to their magnitude) tie for the arg-max at tau == 0.
inline constexpr double kTieTolerance = 1e-9;

// The largest of x[0..n), or NaN when one of them is: a NaN score (from a message that is not a
// number) must reach F and the beliefs, where evaluation finds it, and std::max keeps or drops
// it depending on its position.
inline double max_of(const double* x, int64_t n) {
  double m = x[0];
  for (int64_t i = 1; i < n; ++i) m = (x[i] > m || std::isnan(x[i])) ? x[i] : m;
  return m;
}

// The exp loops vectorise (libmvec, see vector_math.hpp): factor tables of many states spend
// most of their time here.
inline double smax(const double* x, int64_t n, double tau) {
  if (tau == 0.0) return max_of(x, n);
  const double inverse = 1.0 / tau;
  const double m = max_over(1, n, x[0] * inverse, [&](int64_t i) { return x[i] * inverse; });
  double sum = 0.0;
  const double lowest = exp_floor();
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += std::exp(floored(x[i] * inverse - m, lowest));
  return tau * (m + std::log(sum));
}

// Writes the distribution whose log-normaliser smax computes (at tau == 0: uniform over ties).
inline void soft_argmax(const double* x, int64_t n, double tau, double* out) {
  double sum = 0.0;
  if (tau == 0.0) {
    const double m = max_of(x, n);
    const double slack = kTieTolerance * std::max(1.0, std::abs(m));
    for (int64_t i = 0; i < n; ++i) sum += out[i] = (x[i] >= m - slack) ? 1.0 : 0.0;
  } else {
    const double scale = 1.0 / tau;
    const double m = max_over(1, n, x[0] * scale, [&](int64_t i) { return x[i] * scale; });
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += out[i] = std::exp(x[i] * scale - m);
  }
  const double inverse = 1.0 / sum;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] *= inverse;
}

// -sum p log p, with 0 log 0 = 0 (log of 1 in its place keeps the loop branch-free, so that it
// vectorises: a factor table's beliefs spend as long here as in their exps).
inline double entropy(const double* p, int64_t n) {
  double h = 0.0;
#pragma omp simd reduction(+ : h)
  for (int64_t i = 0; i < n; ++i) h -= p[i] * std::log(p[i] > 0.0 ? p[i] : 1.0);
  return h;
}

}  // namespace pdsp
