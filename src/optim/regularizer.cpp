#include "pdsp/optim/regularizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pdsp {

double Regularizer::value(std::span<const double> theta) const {
  double sum = 0.0;
  for (double t : theta) sum += p == 2.0 ? t * t : std::pow(std::abs(t), p);
  return C / p * sum;
}

void Regularizer::add_gradient(std::span<const double> theta, std::span<double> grad) const {
  for (size_t r = 0; r < theta.size(); ++r) {
    const double t = theta[r];
    const double sign = (t > 0) - (t < 0);
    grad[r] += p == 2.0 ? C * t : C * std::pow(std::abs(t), p - 1.0) * sign;
  }
}

double Regularizer::conjugate(std::span<const double> w) const {
  if (p == 1.0) {
    for (double x : w)
      if (std::abs(x) > C * (1.0 + 1e-12)) return std::numeric_limits<double>::infinity();
    return 0.0;
  }
  const double q = p / (p - 1.0);
  double sum = 0.0;
  for (double x : w) sum += q == 2.0 ? x * x : std::pow(std::abs(x), q);
  return std::pow(C, 1.0 - q) / q * sum;
}

void Regularizer::conjugate_gradient(std::span<const double> w, std::span<double> out) const {
  if (p == 1.0) {
    std::fill(out.begin(), out.end(), 0.0);
    return;
  }
  const double q = p / (p - 1.0);
  const double scale = std::pow(C, 1.0 - q);
  for (size_t r = 0; r < w.size(); ++r) {
    const double sign = (w[r] > 0) - (w[r] < 0);
    out[r] = q == 2.0 ? scale * w[r] : scale * std::pow(std::abs(w[r]), q - 1.0) * sign;
  }
}

}  // namespace pdsp
