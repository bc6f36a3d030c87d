#include "pdsp/optim/conjugate_gradient.hpp"

#include <algorithm>
#include <vector>

#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

void conjugate_gradient(int steps, const LinearMap& a, const LinearMap& precondition,
                        std::span<const double> b, std::span<double> x) {
  const size_t n = b.size();
  std::vector<double> residual(b.begin(), b.end()), z(n), direction(n), a_direction(n);
  std::fill(x.begin(), x.end(), 0.0);
  precondition(residual, z);
  direction = z;
  double rz = dot(residual, z);
  for (int step = 0; step < steps; ++step) {
    a(direction, a_direction);
    const double curvature = dot(direction, a_direction);
    if (!(curvature > 0)) break;
    const double alpha = rz / curvature;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * direction[i];
      residual[i] -= alpha * a_direction[i];
    }
    if (step + 1 == steps) break;  // the last step needs no new direction
    precondition(residual, z);
    const double next_rz = dot(residual, z);
    const double beta = next_rz / rz;
    rz = next_rz;
    for (size_t i = 0; i < n; ++i) direction[i] = z[i] + beta * direction[i];
  }
}

}  // namespace pdsp
