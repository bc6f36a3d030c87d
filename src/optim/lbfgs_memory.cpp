#include "pdsp/optim/lbfgs_memory.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/util/huge_pages.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {
namespace {

// A pair whose s'y is below this fraction of |s||y| says the gradient change along s is not
// (clearly) positive: the messages moved between the two gradients, or F is not convex there.
// Keeping it would make H indefinite or huge.
constexpr double kMinCurvature = 1e-10;

// q += c v and, when w is given, the dot product w . q of the updated q, summed in index order
// as dot() sums it: one pass over q where the recursion's update and its next dot product took
// two (both loops of the recursion: a direction on 5 million parameters 95 -> 72 ms).
double update_then_dot(std::span<double> q, double c, std::span<const double> v, const double* w) {
  const size_t n = q.size();
  if (w == nullptr) {
    for (size_t r = 0; r < n; ++r) q[r] += c * v[r];
    return 0.0;
  }
  double sum = 0.0;
  for (size_t r = 0; r < n; ++r) {
    q[r] += c * v[r];
    sum = sum + w[r] * q[r];
  }
  return sum;
}

}  // namespace

bool LbfgsMemory::complete_pair(std::span<const double> new_gradient, int capacity) {
  const size_t n = new_gradient.size();
  if (step.size() != n || gradient.size() != n) {
    step.clear();
    gradient.clear();
    return false;
  }
  // The pending gradient becomes y = g_{k+1} - g_k in place: it is cleared below anyway, and a
  // temporary of a large model's size (40 MB on the citations) costs its pages every iteration.
  std::vector<double>& change = gradient;
  for (size_t r = 0; r < n; ++r) change[r] = new_gradient[r] - change[r];
  const double sy = dot(step, change);
  const bool kept =
      std::isfinite(sy) && sy > kMinCurvature * std::sqrt(dot(step, step) * dot(change, change));
  if (kept) {
    capacity = std::max(capacity, 1);
    if (curvatures.size() != static_cast<size_t>(pairs(n))) recompute_curvatures(n);
    // A memory read with more pairs than this run keeps, or not yet full but wrapped (neither
    // happens within one run), is first put in order.
    if (pairs(n) > capacity || (oldest != 0 && pairs(n) < capacity)) keep_newest(capacity, n);
    if (pairs(n) < capacity) {
      s.insert(s.end(), step.begin(), step.end());
      y.insert(y.end(), change.begin(), change.end());
      curvatures.push_back(sy);
    } else {
      const auto at = static_cast<std::ptrdiff_t>(static_cast<size_t>(oldest) * n);
      std::copy(step.begin(), step.end(), s.begin() + at);
      std::copy(change.begin(), change.end(), y.begin() + at);
      curvatures[static_cast<size_t>(oldest)] = sy;
      oldest = (oldest + 1) % capacity;
    }
  }
  step.clear();
  gradient.clear();
  return kept;
}

void LbfgsMemory::remember_step(std::span<const double> taken,
                                std::span<const double> from_gradient) {
  step.assign(taken.begin(), taken.end());
  gradient.assign(from_gradient.begin(), from_gradient.end());
}

void LbfgsMemory::direction(std::span<const double> g, std::span<double> d,
                            const InverseCurvature& inverse, bool rescale_inverse,
                            std::span<double> scratch) const {
  const size_t n = g.size();
  const int m = pairs(n);
  // Newest pair to oldest: q = (prod (I - rho_i y_i s_i')) g, remembering each alpha_i. q lives
  // in d, which needs no pages of its own.
  const std::span<double> q = d;
  std::copy(g.begin(), g.end(), q.begin());
  std::vector<double> alpha(static_cast<size_t>(m)), rho(static_cast<size_t>(m));
  // s'y of pair i: cached, or for pairs set by hand without recompute_curvatures, computed here.
  const bool cached = curvatures.size() == static_cast<size_t>(m);
  auto curvature = [&](int i) {
    return cached ? curvatures[static_cast<size_t>((oldest + i) % m)]
                  : dot(pair_s(i, n), pair_y(i, n));
  };
  double s_dot_q = m > 0 ? dot(pair_s(m - 1, n), q) : 0.0;
  for (int i = m - 1; i >= 0; --i) {
    rho[i] = 1.0 / curvature(i);
    alpha[i] = rho[i] * s_dot_q;
    s_dot_q =
        update_then_dot(q, -alpha[i], pair_y(i, n), i > 0 ? pair_s(i - 1, n).data() : nullptr);
  }
  // H_0 = gamma I (or gamma P^{-1}) scales the step to the curvature along the newest pair, so
  // the unit step is usually accepted.
  if (inverse) {
    std::vector<double> temporary(scratch.size() == n ? 0 : n);
    const std::span<double> scaled = scratch.size() == n ? scratch : std::span<double>(temporary);
    double gamma = 1.0;
    if (m > 0 && rescale_inverse) {
      inverse(pair_y(m - 1, n), scaled);
      gamma = curvature(m - 1) / dot(pair_y(m - 1, n), scaled);
    }
    inverse(q, scaled);
    for (size_t r = 0; r < n; ++r) q[r] = gamma * scaled[r];
  } else {
    const double gamma = m == 0 ? 1.0 : curvature(m - 1) / dot(pair_y(m - 1, n), pair_y(m - 1, n));
    for (size_t r = 0; r < n; ++r) q[r] *= gamma;
  }
  // Oldest to newest: apply the rank-two corrections.
  double y_dot_q = m > 0 ? dot(pair_y(0, n), q) : 0.0;
  for (int i = 0; i < m; ++i) {
    const double beta = rho[i] * y_dot_q;
    y_dot_q = update_then_dot(q, alpha[i] - beta, pair_s(i, n),
                              i + 1 < m ? pair_y(i + 1, n).data() : nullptr);
  }
  for (size_t r = 0; r < n; ++r) d[r] = -q[r];
}

void LbfgsMemory::keep_newest(int kept, size_t params) {
  const auto shift = static_cast<std::ptrdiff_t>(static_cast<size_t>(oldest) * params);
  std::rotate(s.begin(), s.begin() + shift, s.end());
  std::rotate(y.begin(), y.begin() + shift, y.end());
  std::rotate(curvatures.begin(), curvatures.begin() + oldest, curvatures.end());
  oldest = 0;
  const int dropped = std::max(pairs(params) - kept, 0);
  const auto values = static_cast<std::ptrdiff_t>(static_cast<size_t>(dropped) * params);
  s.erase(s.begin(), s.begin() + values);
  y.erase(y.begin(), y.begin() + values);
  curvatures.erase(curvatures.begin(), curvatures.begin() + dropped);
}

void LbfgsMemory::recompute_curvatures(size_t params) {
  // Slot by slot, as the ring holds them.
  curvatures.resize(static_cast<size_t>(pairs(params)));
  for (size_t k = 0; k < curvatures.size(); ++k)
    curvatures[k] = dot(std::span<const double>(s).subspan(k * params, params),
                        std::span<const double>(y).subspan(k * params, params));
}

void LbfgsMemory::clear() {
  s.clear();
  y.clear();
  curvatures.clear();
  oldest = 0;
  step.clear();
  gradient.clear();
}

void LbfgsMemory::reserve(size_t params, int capacity) {
  // Pairs are written into the reserve one iteration after another: on huge pages, the first
  // touch of each costs a few faults rather than thousands.
  reserve_on_huge_pages(s, params * static_cast<size_t>(capacity));
  reserve_on_huge_pages(y, params * static_cast<size_t>(capacity));
  reserve_on_huge_pages(step, params);
  reserve_on_huge_pages(gradient, params);
}

}  // namespace pdsp
