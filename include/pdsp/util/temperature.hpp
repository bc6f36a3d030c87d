#pragma once
// The rule every temperature epsilon obeys, wherever it comes from (a flag, a model file).
#include <cmath>

namespace pdsp {

// A usable temperature: 0 (the exact max) or at least 1e-12, below which the scores divided by
// the temperature overflow.
inline bool is_valid_epsilon(double epsilon) {
  return std::isfinite(epsilon) && (epsilon == 0 || epsilon >= 1e-12);
}

}  // namespace pdsp
