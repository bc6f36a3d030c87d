#include "pdsp/inference/mean_field.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/inference/smax.hpp"
#include "pdsp/inference/table_ops.hpp"
#include "pdsp/inference/vector_math.hpp"

namespace pdsp {

MeanField::MeanField(const Dataset& data, const FactorGraph& graph, const ExampleChunks& chunks)
    : data_(data), graph_(graph), chunks_(chunks) {
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
// E[u_a(1, y_w) - u_a(0, y_w)] under q_w. With every factor pairwise, slot e of factor a is
// 2a + k, its partner e ^ 1, and the table u(t_first, t_second) starts at 4a.
double MeanField::binary_pairwise_sweep(int64_t n, const double* potential, double* belief,
                                        Workspace& w) const {
  const double* tables = potential + data_.num_states();
  const LocalIndex* factor_vars = data_.factor_vars.data();
  double* field = w.lane_a.data();
  double* high = w.lane_b.data();  // q of the state f favours
  double* low = w.lane_c.data();   // q of the other
  double change = 0.0;
  for (int64_t k = chunks_.example_ptr[n]; k < chunks_.example_ptr[n + 1]; ++k) {
    // A class's variables share no factor: their fields read none of the q written below.
    const std::span<const LocalIndex> vars = chunks_.chunk(k);
    const auto lanes = static_cast<int64_t>(vars.size());
    for (int64_t j = 0; j < lanes; ++j) {
      const int64_t v = vars[j];
      double f = potential[2 * v + 1] - potential[2 * v];
      for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i) {
        const int64_t e = graph_.var_slots[i];
        const double* u = tables + 4 * (e >> 1);
        const bool first = (e & 1) == 0;
        const double p = belief[2 * factor_vars[e ^ 1] + 1];
        // (1 - p) [u(1, 0) - u(0, 0)] + p [u(1, 1) - u(0, 1)], v's state first.
        f += (1 - p) * ((first ? u[2] : u[1]) - u[0]) + p * (u[3] - (first ? u[1] : u[2]));
      }
      field[j] = f;
    }
    // Harmless lanes up to a whole number of SIMD registers: the scalar remainder would call
    // the scalar exp.
    const int64_t padded =
        std::min(round_up_to_vector(lanes), static_cast<int64_t>(w.lane_a.size()));
    std::fill(field + lanes, field + padded, 0.0);
    // Both states from one exp of -|f|, so that the smaller keeps its digits.
#pragma omp simd
    for (int64_t j = 0; j < padded; ++j) {
      const double small = std::exp(-std::abs(field[j]));
      high[j] = 1 / (1 + small);
      low[j] = small * high[j];
    }
    for (int64_t j = 0; j < lanes; ++j) {
      double* q = belief + 2 * vars[j];
      const double q1 = field[j] >= 0 ? high[j] : low[j];
      const double q0 = field[j] >= 0 ? low[j] : high[j];
      change = std::max({change, std::abs(q0 - q[0]), std::abs(q1 - q[1])});
      q[0] = q0;
      q[1] = q1;
    }
  }
  return change;
}

double MeanField::sweep(int64_t n, const double* potential, double* belief, Workspace& w) const {
  if (binary_pairwise_) return binary_pairwise_sweep(n, potential, belief, w);
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
