#include "pdsp/optim/smoothing.hpp"

#include <algorithm>

#include "pdsp/util/temperature.hpp"

namespace pdsp {

double next_temperature(const SmoothingProgress& p) {
  if (!p.small_decrease && (!(p.entropy > 0.5 * p.target) || p.smoothed_gap > p.entropy))
    return p.temperature;
  const double factor = std::clamp(0.5 * p.target / p.entropy, 0.1, 0.5);
  return std::max(kSmallestEpsilon, p.temperature * factor);
}

}  // namespace pdsp
