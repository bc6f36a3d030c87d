#pragma once
// The regulariser (C/p) sum |theta_r|^p of F and the conjugate term of the dual D.
#include <span>

namespace pdsp {

struct Regularizer {
  double C = 1.0;
  double p = 2.0;

  double value(std::span<const double> theta) const;
  // grad[r] += C |theta_r|^(p-1) sign(theta_r)   (p = 1: C sign(theta_r), a subgradient)
  void add_gradient(std::span<const double> theta, std::span<double> grad) const;
  // (C^(1-q) / q) ||w||_q^q with q = p / (p - 1); for p = 1 the indicator of ||w||_inf <= C.
  double conjugate(std::span<const double> w) const;
  // Its gradient C^(1-q) |w_r|^(q-1) sign(w_r) (p > 1 only; p = 1 gives 0, the indicator's
  // gradient inside its domain).
  void conjugate_gradient(std::span<const double> w, std::span<double> out) const;
};

}  // namespace pdsp
