#include "pdsp/learning/smoothing.hpp"

#include <algorithm>
#include <cstddef>

#include "pdsp/util/temperature.hpp"

namespace pdsp {

double next_temperature(const SmoothingProgress& p) {
  if (!p.small_decrease && (!(p.entropy > 0.5 * p.target) || p.smoothed_gap > p.entropy))
    return p.temperature;
  const double factor = std::clamp(0.5 * p.target / p.entropy, 0.1, 0.5);
  return std::max(kSmallestEpsilon, p.temperature * factor);
}

namespace {

// Euclidean projection onto the probability simplex (sort, then shift and clip).
void project_to_simplex(std::vector<double>& x) {
  std::vector<double> sorted(x);
  std::sort(sorted.rbegin(), sorted.rend());
  double sum = 0, shift = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    sum += sorted[i];
    const double candidate = (sum - 1.0) / static_cast<double>(i + 1);
    if (sorted[i] > candidate) shift = candidate;
  }
  for (double& v : x) v = std::max(0.0, v - shift);
}

}  // namespace

double DualBundle::add(std::span<const double> z, double loss, std::span<const double> d,
                       const Regularizer& regularizer) {
  const size_t params = z.size();
  const size_t count = losses.size();
  if (count < static_cast<size_t>(kDualPoints)) {
    moments.insert(moments.end(), z.begin(), z.end());
    losses.push_back(loss);
  } else {
    std::copy(z.begin(), z.end(), moments.begin() + static_cast<std::ptrdiff_t>(next * params));
    losses[static_cast<size_t>(next)] = loss;
    next = (next + 1) % kDualPoints;
  }
  const size_t k = losses.size();
  std::vector<double> w(params), conj_gradient(params), gradient(k), trial(k);
  // h(omega) and its gradient: w = sum omega_k z_k - d, dh/domega_k = loss_k - conj'(w) . z_k.
  const auto value = [&](const std::vector<double>& omega, bool with_gradient) {
    std::fill(w.begin(), w.end(), 0.0);
    double mixed_loss = 0;
    for (size_t j = 0; j < k; ++j) {
      mixed_loss += omega[j] * losses[j];
      for (size_t r = 0; r < params; ++r) w[r] += omega[j] * moments[j * params + r];
    }
    for (size_t r = 0; r < params; ++r) w[r] -= d[r];
    if (with_gradient) {
      regularizer.conjugate_gradient(w, conj_gradient);
      for (size_t j = 0; j < k; ++j) {
        double dot = 0;
        for (size_t r = 0; r < params; ++r) dot += conj_gradient[r] * moments[j * params + r];
        gradient[j] = losses[j] - dot;
      }
    }
    return mixed_loss - regularizer.conjugate(w);
  };
  // Start from the newest point alone, then projected gradient ascent with backtracking.
  std::vector<double> omega(k, 0.0);
  omega[count < static_cast<size_t>(kDualPoints) ? k - 1 : (next + kDualPoints - 1) % kDualPoints] =
      1.0;
  double current = value(omega, true);
  double step = 1.0;
  for (int iteration = 0; iteration < 200 && step > 1e-300; ++iteration) {
    for (size_t j = 0; j < k; ++j) trial[j] = omega[j] + step * gradient[j];
    project_to_simplex(trial);
    const double candidate = value(trial, false);
    if (candidate > current) {
      omega.swap(trial);
      current = value(omega, true);
      step *= 2;
    } else {
      step *= 0.25;
    }
  }
  if (std::isfinite(current)) best = std::max(best, current);
  return best;
}

}  // namespace pdsp
