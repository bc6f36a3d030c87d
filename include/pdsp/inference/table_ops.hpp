#pragma once
// Kernels over one factor table, viewed along one of its variables ("slot"). A table of size T
// is row-major over its variables, so the state of a slot with cardinality `card` and stride
// `stride` repeats in blocks: t = (outer * card + s) * stride + inner.
#include <cstdint>

#include "pdsp/inference/smax.hpp"
#include "pdsp/inference/vector_math.hpp"

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

// out[s] = smax_tau over the joint states t with t_slot = s of table[t]; `sum` is scratch of
// `card` entries. At tau != 0 the loops run along contiguous memory (over the slot's states when
// the slot is the last variable, stride 1; within each block otherwise) so that they vectorise
// with libmvec's exp: this is most of the time of a sweep on tables of many states.
inline void smax_along_slot(const double* table, int64_t size, int64_t card, int64_t stride,
                            double tau, double* out, double* sum) {
  const int64_t block = card * stride;
  if (tau == 0.0) {
    for (int64_t s = 0; s < card; ++s) {
      double m = -INFINITY;
      for (int64_t outer = 0; outer < size; outer += block) {
        const double* row = table + outer + s * stride;
        for (int64_t inner = 0; inner < stride; ++inner) m = std::max(m, row[inner]);
      }
      out[s] = m;
    }
    return;
  }
  // out[s] holds the largest scaled score of state s first, so that every exponent is <= 0.
  const double inverse = 1.0 / tau;
  const double lowest = exp_floor();
  for (int64_t s = 0; s < card; ++s) {
    out[s] = -INFINITY;
    sum[s] = 0.0;
  }
  if (stride == 1) {
    for (int64_t outer = 0; outer < size; outer += block) {
      const double* row = table + outer;
#pragma omp simd
      for (int64_t s = 0; s < card; ++s) out[s] = std::max(out[s], row[s] * inverse);
    }
    for (int64_t outer = 0; outer < size; outer += block) {
      const double* row = table + outer;
#pragma omp simd
      for (int64_t s = 0; s < card; ++s)
        sum[s] += std::exp(floored(row[s] * inverse - out[s], lowest));
    }
  } else {
    for (int64_t s = 0; s < card; ++s) {
      double m = -INFINITY, total = 0.0;
      for (int64_t outer = 0; outer < size; outer += block) {
        const double* row = table + outer + s * stride;
        m = max_over(0, stride, m, [&](int64_t inner) { return row[inner] * inverse; });
      }
      for (int64_t outer = 0; outer < size; outer += block) {
        const double* row = table + outer + s * stride;
#pragma omp simd reduction(+ : total)
        for (int64_t inner = 0; inner < stride; ++inner)
          total += std::exp(floored(row[inner] * inverse - m, lowest));
      }
      out[s] = m;
      sum[s] = total;
    }
  }
  for (int64_t s = 0; s < card; ++s) out[s] = tau * (out[s] + std::log(sum[s]));
}

// The same for a pairwise table plus the other variable's message, without forming the sum in
// a copy of the table: out[s] = smax_tau over t of table(s, t) + message[t], where table(s, t)
// is table[s * other_card + t] when the variable of s comes first (`first`), else
// table[t * card + s]. `sum` is scratch of `card` entries. One pass fewer over the table than
// add_along_slot and smax_along_slot on a copy; on 26-state chains that pass is a third of a
// sweep.
inline void smax_pairwise(const double* table, int64_t card, int64_t other_card, bool first,
                          const double* message, double tau, double* out, double* sum) {
  const double inverse = tau == 0.0 ? 1.0 : 1.0 / tau;
  const double lowest = exp_floor();
  if (first) {
    for (int64_t s = 0; s < card; ++s) {
      const double* row = table + s * other_card;
      const double m = max_over(0, other_card, -INFINITY,
                                [&](int64_t t) { return (row[t] + message[t]) * inverse; });
      if (tau == 0.0) {
        out[s] = m;
        continue;
      }
      double total = 0.0;
#pragma omp simd reduction(+ : total)
      for (int64_t t = 0; t < other_card; ++t)
        total += std::exp(floored((row[t] + message[t]) * inverse - m, lowest));
      out[s] = tau * (m + std::log(total));
    }
    return;
  }
  for (int64_t s = 0; s < card; ++s) {
    out[s] = -INFINITY;
    sum[s] = 0.0;
  }
  for (int64_t t = 0; t < other_card; ++t) {
    const double* row = table + t * card;
    const double shift = message[t];
#pragma omp simd
    for (int64_t s = 0; s < card; ++s) out[s] = std::max(out[s], (row[s] + shift) * inverse);
  }
  if (tau == 0.0) return;
  for (int64_t t = 0; t < other_card; ++t) {
    const double* row = table + t * card;
    const double shift = message[t];
#pragma omp simd
    for (int64_t s = 0; s < card; ++s)
      sum[s] += std::exp(floored((row[s] + shift) * inverse - out[s], lowest));
  }
  for (int64_t s = 0; s < card; ++s) out[s] = tau * (out[s] + std::log(sum[s]));
}

// out[j] += sum over i < rows of weight(i) * row(i)[j] for j < cols, where row(i) points to a
// row of cols entries: blocks of 8 columns summed in registers (a sum into `out` row after row
// waits on a store and a reload of out per row; a dot product per column on a horizontal sum).
template <class Row, class Weight>
inline void add_weighted_rows(int64_t rows, int64_t cols, Row&& row, Weight&& weight, double* out) {
  constexpr int64_t kLanes = 8;
  int64_t j0 = 0;
  for (; j0 + kLanes <= cols; j0 += kLanes) {
    double sum[kLanes] = {};
    for (int64_t i = 0; i < rows; ++i) {
      const double* r = row(i) + j0;
      const double w = weight(i);
#pragma omp simd
      for (int64_t j = 0; j < kLanes; ++j) sum[j] += w * r[j];
    }
    for (int64_t j = 0; j < kLanes; ++j) out[j0 + j] += sum[j];
  }
  for (int64_t j = j0; j < cols; ++j) {
    double sum = 0.0;
    for (int64_t i = 0; i < rows; ++i) sum += weight(i) * row(i)[j];
    out[j] += sum;
  }
}

// out[s] = sum over the joint states t with t_slot = s of table[t] (marginalisation). The loops
// run along contiguous memory and vectorise: the marginalisation violation reads every factor
// table twice per evaluation, and a sequential sum of 26 entries per state made it the largest
// term of an OCR evaluation.
inline void sum_along_slot(const double* table, int64_t size, int64_t card, int64_t stride,
                           double* out) {
  for (int64_t s = 0; s < card; ++s) out[s] = 0.0;
  if (stride == 1) {
    add_weighted_rows(
        size / card, card, [table, card](int64_t i) { return table + i * card; },
        [](int64_t) { return 1.0; }, out);
    return;
  }
  const int64_t block = card * stride;
  for (int64_t outer = 0; outer < size; outer += block)
    for (int64_t s = 0; s < card; ++s) {
      const double* row = table + outer + s * stride;
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t inner = 0; inner < stride; ++inner) sum += row[inner];
      out[s] += sum;
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
