#pragma once
// Kernels over one factor table, viewed along one of its variables ("slot"). A table of size T
// is row-major over its variables, so the state of a slot with cardinality `card` and stride
// `stride` repeats in blocks: t = (outer * card + s) * stride + inner.
#include <cstdint>

#include "pdsp/inference/smax.hpp"

namespace pdsp {

// Calls apply(table[t], s) for every joint state t, with s = t_slot.
template <class Apply>
inline void for_each_along_slot(double* table, int64_t size, int64_t card, int64_t stride,
                                Apply&& apply) {
  const int64_t block = card * stride;
  for (int64_t outer = 0; outer < size; outer += block)
    for (int64_t s = 0; s < card; ++s) {
      double* row = table + outer + s * stride;
      for (int64_t inner = 0; inner < stride; ++inner) apply(row[inner], s);
    }
}

// table[t] += message[t_slot] for every joint state t.
inline void add_along_slot(double* table, int64_t size, int64_t card, int64_t stride,
                           const double* message) {
  for_each_along_slot(table, size, card, stride,
                      [message](double& x, int64_t s) { x += message[s]; });
}

// out[s] = smax_tau over the joint states t with t_slot = s of table[t].
inline void smax_along_slot(const double* table, int64_t size, int64_t card, int64_t stride,
                            double tau, double* out) {
  const int64_t block = card * stride;
  for (int64_t s = 0; s < card; ++s) {
    double m = -INFINITY;
    for (int64_t outer = 0; outer < size; outer += block) {
      const double* row = table + outer + s * stride;
      for (int64_t inner = 0; inner < stride; ++inner)
        m = std::max(m, tau == 0.0 ? row[inner] : row[inner] / tau);
    }
    if (tau == 0.0) {
      out[s] = m;
      continue;
    }
    double sum = 0.0;
    for (int64_t outer = 0; outer < size; outer += block) {
      const double* row = table + outer + s * stride;
      for (int64_t inner = 0; inner < stride; ++inner) sum += std::exp(row[inner] / tau - m);
    }
    out[s] = tau * (m + std::log(sum));
  }
}

// out[s] = sum over the joint states t with t_slot = s of table[t] (marginalisation).
inline void sum_along_slot(const double* table, int64_t size, int64_t card, int64_t stride,
                           double* out) {
  const int64_t block = card * stride;
  for (int64_t s = 0; s < card; ++s) out[s] = 0.0;
  for (int64_t outer = 0; outer < size; outer += block)
    for (int64_t s = 0; s < card; ++s) {
      const double* row = table + outer + s * stride;
      for (int64_t inner = 0; inner < stride; ++inner) out[s] += row[inner];
    }
}

}  // namespace pdsp

namespace pdsp {

// table[t] *= weight[t_slot] for every joint state t.
inline void scale_along_slot(double* table, int64_t size, int64_t card, int64_t stride,
                             const double* weight) {
  for_each_along_slot(table, size, card, stride,
                      [weight](double& x, int64_t s) { x *= weight[s]; });
}

}  // namespace pdsp
