#include "pdsp/optim/dual_bundle.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace pdsp {
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

// p = 2: maximises omega . loss - omega' G omega / (2C) over the simplex. Each step moves weight
// from the point of smallest gradient among those with weight to the point of largest gradient,
// by the exact maximiser along that pair (SMO's working-set rule, linearly convergent on such
// quadratics); it stops when no pair gains beyond round-off.
void maximise_quadratic(const std::vector<double>& gram, std::span<const double> losses, double C,
                        std::vector<double>& omega) {
  const size_t k = losses.size();
  std::vector<double> g_omega(k, 0.0);  // G omega
  for (size_t a = 0; a < k; ++a)
    for (size_t b = 0; b < k; ++b) g_omega[a] += gram[a * k + b] * omega[b];
  for (int step = 0; step < 100000; ++step) {
    size_t up = k, down = k;
    double most = -INFINITY, least = INFINITY;
    for (size_t a = 0; a < k; ++a) {
      const double gradient = losses[a] - g_omega[a] / C;
      if (gradient > most) most = gradient, up = a;
      if (omega[a] > 0 && gradient < least) least = gradient, down = a;
    }
    const double gain = most - least;
    if (up == k || down == k || up == down ||
        !(gain > 1e-15 * std::max({1.0, std::abs(most), std::abs(least)})))
      return;
    const double curvature =
        (gram[up * k + up] + gram[down * k + down] - 2 * gram[up * k + down]) / C;
    const double t = curvature > 0 ? std::min(omega[down], gain / curvature) : omega[down];
    if (!(t > 0)) return;
    omega[up] += t;
    omega[down] = t == omega[down] ? 0.0 : omega[down] - t;
    for (size_t a = 0; a < k; ++a) g_omega[a] += t * (gram[a * k + up] - gram[a * k + down]);
  }
}

// D_0 at the mixture omega of the points (moments in blocks of d.size()); with `gradient`, also
// dD_0/domega_k = loss_k - conj'(w) . z_k, where w = sum omega_k z_k - d.
double mixture_value(const std::vector<double>& moments, const std::vector<double>& losses,
                     const std::vector<double>& omega, std::span<const double> d,
                     const Regularizer& regularizer, std::vector<double>* gradient) {
  const size_t params = d.size(), n = losses.size();
  std::vector<double> mixed(params, 0.0);
  double mixed_loss = 0;
  for (size_t k = 0; k < n; ++k) {
    if (omega[k] == 0) continue;
    mixed_loss += omega[k] * losses[k];
    for (size_t r = 0; r < params; ++r) mixed[r] += omega[k] * moments[k * params + r];
  }
  for (size_t r = 0; r < params; ++r) mixed[r] -= d[r];
  if (gradient != nullptr) {
    std::vector<double> conj_gradient(params);
    regularizer.conjugate_gradient(mixed, conj_gradient);
    for (size_t k = 0; k < n; ++k) {
      double dot = 0;
      for (size_t r = 0; r < params; ++r) dot += conj_gradient[r] * moments[k * params + r];
      (*gradient)[k] = losses[k] - dot;
    }
  }
  return mixed_loss - regularizer.conjugate(mixed);
}

// p other than 2: projected gradient ascent with backtracking from omega (the last best mixture).
void maximise_by_projected_gradient(const std::vector<double>& moments,
                                    const std::vector<double>& losses, std::span<const double> d,
                                    const Regularizer& regularizer, std::vector<double>& omega) {
  const size_t n = losses.size();
  std::vector<double> gradient(n), trial(n);
  double current = mixture_value(moments, losses, omega, d, regularizer, &gradient), step = 1.0;
  for (int iteration = 0; iteration < 200 && step > 1e-300; ++iteration) {
    for (size_t k = 0; k < n; ++k) trial[k] = omega[k] + step * gradient[k];
    project_to_simplex(trial);
    const double candidate = mixture_value(moments, losses, trial, d, regularizer, nullptr);
    if (candidate > current) {
      omega.swap(trial);
      current = mixture_value(moments, losses, omega, d, regularizer, &gradient);
      step *= 2;
    } else {
      step *= 0.25;
    }
  }
}

}  // namespace

int dual_bundle_capacity(int64_t params) {
  constexpr double kBytes = 128.0 * 1024 * 1024;
  const double fit = kBytes / (8.0 * static_cast<double>(std::max<int64_t>(params, 1)));
  return static_cast<int>(std::clamp(fit, 2.0, static_cast<double>(kMaxDualPoints)));
}

void DualBundle::set_gram_row(size_t k, std::span<const double> d) {
  const size_t params = d.size(), n = size();
  const double* a = moments.data() + k * params;
  for (size_t b = 0; b < n; ++b) {
    const double* other = moments.data() + b * params;
    double sum = 0;
    for (size_t r = 0; r < params; ++r) sum += (a[r] - d[r]) * (other[r] - d[r]);
    gram_[k * n + b] = gram_[b * n + k] = sum;
  }
}

void DualBundle::remove(size_t k, size_t params) {
  const size_t n = size();
  moments.erase(moments.begin() + static_cast<std::ptrdiff_t>(k * params),
                moments.begin() + static_cast<std::ptrdiff_t>((k + 1) * params));
  losses.erase(losses.begin() + static_cast<std::ptrdiff_t>(k));
  weights.erase(weights.begin() + static_cast<std::ptrdiff_t>(k));
  std::vector<double> kept;
  kept.reserve((n - 1) * (n - 1));
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b)
      if (a != k && b != k) kept.push_back(gram_[a * n + b]);
  gram_.swap(kept);
}

void DualBundle::make_room(size_t capacity, std::span<const double> d) {
  const size_t params = d.size();
  if (size() < capacity) return;
  const auto unused = std::find(weights.begin(), weights.end(), 0.0);
  if (unused != weights.end()) {
    remove(static_cast<size_t>(unused - weights.begin()), params);
    return;
  }
  std::vector<size_t> order(size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::partial_sort(order.begin(), order.begin() + 2, order.end(),
                    [&](size_t a, size_t b) { return weights[a] < weights[b]; });
  const size_t keep = std::min(order[0], order[1]), gone = std::max(order[0], order[1]);
  const double total = weights[keep] + weights[gone];
  const double share = weights[gone] / total;
  double* into = moments.data() + keep * params;
  const double* from = moments.data() + gone * params;
  for (size_t r = 0; r < params; ++r) into[r] += share * (from[r] - into[r]);
  losses[keep] += share * (losses[gone] - losses[keep]);
  weights[keep] = total;
  remove(gone, params);
  set_gram_row(keep, d);
}

double DualBundle::add(std::span<const double> z, double loss, std::span<const double> d,
                       const Regularizer& regularizer, int capacity) {
  if (gram_.size() != size() * size()) {  // after a resume
    gram_.assign(size() * size(), 0.0);
    for (size_t k = 0; k < size(); ++k) set_gram_row(k, d);
  }
  make_room(static_cast<size_t>(std::max(capacity, 2)), d);
  const size_t n = size() + 1;
  moments.insert(moments.end(), z.begin(), z.end());
  losses.push_back(loss);
  weights.push_back(n == 1 ? 1.0 : 0.0);
  std::vector<double> grown(n * n, 0.0);
  for (size_t a = 0; a + 1 < n; ++a)
    std::copy_n(gram_.begin() + static_cast<std::ptrdiff_t>(a * (n - 1)), n - 1,
                grown.begin() + static_cast<std::ptrdiff_t>(a * n));
  gram_.swap(grown);
  set_gram_row(n - 1, d);

  if (regularizer.p == 2.0)
    maximise_quadratic(gram_, losses, regularizer.C, weights);
  else
    maximise_by_projected_gradient(moments, losses, d, regularizer, weights);
  const double bound = mixture_value(moments, losses, weights, d, regularizer, nullptr);
  if (std::isfinite(bound)) best = std::max(best, bound);
  return best;
}

void ring_bundle_in_order(DualBundle& bundle, int64_t next, int64_t params) {
  if (bundle.losses.empty()) return;
  std::rotate(bundle.losses.begin(), bundle.losses.begin() + next, bundle.losses.end());
  std::rotate(bundle.moments.begin(), bundle.moments.begin() + next * params, bundle.moments.end());
  bundle.weights.assign(bundle.losses.size(), 0.0);
  bundle.weights.back() = 1.0;
}

}  // namespace pdsp
