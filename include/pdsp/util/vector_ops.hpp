#pragma once
// Small dense vector helpers shared by the optimisers on theta.
#include <numeric>
#include <span>

namespace pdsp {

inline double dot(std::span<const double> a, std::span<const double> b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

}  // namespace pdsp
