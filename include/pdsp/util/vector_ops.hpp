#pragma once
// Small dense vector helpers shared by the optimisers on theta and the problems.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

namespace pdsp {

inline double dot(std::span<const double> a, std::span<const double> b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// max |x| over the values (0 for none).
inline double largest_magnitude(std::span<const double> values) {
  double largest = 0.0;
  for (double x : values) largest = std::max(largest, std::abs(x));
  return largest;
}

}  // namespace pdsp
