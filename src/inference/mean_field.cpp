#include "pdsp/inference/mean_field.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/inference/smax.hpp"
#include "pdsp/inference/table_ops.hpp"

namespace pdsp {

MeanField::MeanField(const Dataset& data, const FactorGraph& graph) : data_(data), graph_(graph) {
  binary_pairwise_ =
      std::all_of(data.card.begin(), data.card.end(), [](int32_t c) { return c == 2; });
  for (int64_t a = 0; binary_pairwise_ && a < data.num_factors(); ++a)
    binary_pairwise_ = data.arity(a) == 2;
}

void MeanField::reset(int64_t n, double* belief) const {
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v)
    std::fill(belief + data_.state_offset[v], belief + data_.state_offset[v + 1],
              1.0 / data_.card[v]);
}

void MeanField::expected_factor_score(int64_t e, const double* potential, const double* belief,
                                      double* out, Workspace& w) const {
  const int64_t a = graph_.factor_of(e);
  const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
  const double* u = potential + data_.num_states() + data_.table_offset[a];
  std::copy(u, u + size, w.table.data());
  for (int64_t j = data_.factor_var_ptr[a]; j < data_.factor_var_ptr[a + 1]; ++j) {
    if (j == e) continue;
    const int64_t v = data_.factor_vars[j];
    scale_along_slot(w.table.data(), size, data_.card[v], graph_.stride_of(j),
                     belief + data_.state_offset[v]);
  }
  sum_along_slot(w.table.data(), size, data_.card[data_.factor_vars[e]], graph_.stride_of(e), out);
}

void MeanField::factor_belief(int64_t a, double* belief) const {
  const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
  double* b = belief + data_.num_states() + data_.table_offset[a];
  std::fill(b, b + size, 1.0);
  for (int64_t j = data_.factor_var_ptr[a]; j < data_.factor_var_ptr[a + 1]; ++j) {
    const int64_t v = data_.factor_vars[j];
    scale_along_slot(b, size, data_.card[v], graph_.stride_of(j), belief + data_.state_offset[v]);
  }
}

// q_v(1) = sigmoid(f), f = u_v(1) - u_v(0) + sum over v's factors a (partner w) of
// E[u_a(1, y_w) - u_a(0, y_w)] under q_w.
double MeanField::binary_pairwise_sweep(int64_t n, const double* potential, double* belief) const {
  const double* tables = potential + data_.num_states();
  double change = 0.0;
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v) {
    const double* u = potential + data_.state_offset[v];
    double field = u[1] - u[0];
    for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i) {
      const int64_t e = graph_.var_slots[i];
      const int64_t a = graph_.factor_of(e);
      const int64_t first = data_.factor_var_ptr[a];
      const int64_t partner = e == first ? first + 1 : first;
      const double* t = tables + data_.table_offset[a];
      const int64_t own = graph_.stride_of(e), other = graph_.stride_of(partner);
      const double p = belief[data_.state_offset[data_.factor_vars[partner]] + 1];
      field += (1 - p) * (t[own] - t[0]) + p * (t[own + other] - t[other]);
    }
    // Both states from one exp of -|f|, so that the smaller keeps its digits.
    const double small = std::exp(-std::abs(field));
    const double low = small / (1 + small), high = 1 / (1 + small);
    double* q = belief + data_.state_offset[v];
    const double q1 = field >= 0 ? high : low;
    const double q0 = field >= 0 ? low : high;
    change = std::max({change, std::abs(q0 - q[0]), std::abs(q1 - q[1])});
    q[0] = q0;
    q[1] = q1;
  }
  return change;
}

double MeanField::sweep(int64_t n, const double* potential, double* belief, Workspace& w) const {
  if (binary_pairwise_) return binary_pairwise_sweep(n, potential, belief);
  double change = 0.0;
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v) {
    const int64_t card = data_.card[v];
    double* score = w.state.data();
    std::copy(potential + data_.state_offset[v], potential + data_.state_offset[v + 1], score);
    for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i) {
      expected_factor_score(graph_.var_slots[i], potential, belief, w.mu.data(), w);
      for (int64_t s = 0; s < card; ++s) score[s] += w.mu[s];
    }
    double* q = belief + data_.state_offset[v];
    soft_argmax(score, card, 1.0, w.mu.data());
    for (int64_t s = 0; s < card; ++s) {
      change = std::max(change, std::abs(w.mu[s] - q[s]));
      q[s] = w.mu[s];
    }
  }
  return change;
}

double MeanField::bound(int64_t n, const double* potential, double* belief) const {
  double total = 0.0;
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v) {
    const double* q = belief + data_.state_offset[v];
    total += entropy(q, data_.card[v]);
    for (int64_t s = 0; s < data_.card[v]; ++s)
      total += q[s] * potential[data_.state_offset[v] + s];
  }
  for (int64_t a = data_.factor_offset[n]; a < data_.factor_offset[n + 1]; ++a) {
    factor_belief(a, belief);
    const int64_t first = data_.num_states() + data_.table_offset[a];
    for (int64_t t = 0; t < data_.table_offset[a + 1] - data_.table_offset[a]; ++t)
      total += belief[first + t] * potential[first + t];
  }
  return total;
}

}  // namespace pdsp
