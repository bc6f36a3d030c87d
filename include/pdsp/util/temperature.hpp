#pragma once
// The rule every temperature epsilon obeys, wherever it comes from (a flag, a model file).
#include <cmath>

namespace pdsp {

// The smallest positive temperature: below it the scores divided by the temperature overflow.
inline constexpr double kSmallestEpsilon = 1e-12;

// A usable temperature: 0 (the exact max) or at least kSmallestEpsilon.
inline bool is_valid_epsilon(double epsilon) {
  return std::isfinite(epsilon) && (epsilon == 0 || epsilon >= kSmallestEpsilon);
}

}  // namespace pdsp
