#include "support/brute_force.hpp"

#include <algorithm>
#include <cmath>

namespace pdsp::testing {
namespace {

double row_dot(const SparseRows& rows, int64_t row, std::span<const double> theta) {
  double sum = 0;
  for (int64_t k = rows.ptr[row]; k < rows.ptr[row + 1]; ++k)
    sum += theta[rows.param[k]] * rows.value[k];
  return sum;
}

void add_row(const SparseRows& rows, int64_t row, double weight, std::vector<double>& out) {
  for (int64_t k = rows.ptr[row]; k < rows.ptr[row + 1]; ++k)
    out[rows.param[k]] += weight * rows.value[k];
}

// Index of factor a's table entry under the joint labelling y (global variable ids).
int64_t table_entry(const Dataset& data, int64_t a, const std::vector<int32_t>& y) {
  int64_t t = 0;
  for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
    t = t * data.card[data.factor_vars[k]] + y[data.factor_vars[k]];
  return t;
}

}  // namespace

ExactSolution solve_exactly(const Dataset& data, std::span<const double> theta, double epsilon,
                            double loss_weight, double C, double p,
                            std::span<const double> state_offset, std::span<const int32_t> held) {
  const int64_t states = data.num_states();
  ExactSolution out;
  out.marginals.assign(static_cast<size_t>(states + data.num_table_entries()), 0.0);
  std::vector<double> model(static_cast<size_t>(data.num_params), 0.0);
  std::vector<double> truth(static_cast<size_t>(data.num_params), 0.0);
  std::vector<int32_t> y(static_cast<size_t>(data.num_vars()), 0);
  double truth_offset = 0;

  for (int64_t n = 0; n < data.num_examples(); ++n) {
    const int64_t v0 = data.var_offset[n], v1 = data.var_offset[n + 1];
    const int64_t a0 = data.factor_offset[n], a1 = data.factor_offset[n + 1];
    // Enumerate every labelling of the example with an odometer over its variables.
    std::vector<std::vector<int32_t>> labellings;
    std::vector<double> scores;
    std::fill(y.begin() + v0, y.begin() + v1, 0);
    while (true) {
      bool allowed = true;
      for (int64_t v = v0; v < v1 && !held.empty(); ++v)
        allowed = allowed && (held[v] < 0 || y[v] == held[v]);
      double score = 0;
      for (int64_t v = v0; v < v1; ++v) {
        score += row_dot(data.var_features, data.state_offset[v] + y[v], theta);
        if (data.label[v] >= 0 && y[v] != data.label[v]) score += loss_weight;
        if (!state_offset.empty()) score += state_offset[data.state_offset[v] + y[v]];
      }
      for (int64_t a = a0; a < a1; ++a)
        score +=
            row_dot(data.factor_features, data.table_offset[a] + table_entry(data, a, y), theta);
      if (allowed) {
        labellings.emplace_back(y.begin() + v0, y.begin() + v1);
        scores.push_back(score);
      }
      int64_t v = v1 - 1;
      while (v >= v0 && ++y[v] == data.card[v]) y[v--] = 0;
      if (v < v0) break;
    }
    const double best = *std::max_element(scores.begin(), scores.end());
    std::vector<double> prob(scores.size());
    double normaliser = 0;
    for (size_t i = 0; i < scores.size(); ++i) {
      prob[i] = epsilon > 0 ? std::exp((scores[i] - best) / epsilon)
                            : (scores[i] >= best - 1e-12 ? 1.0 : 0.0);
      normaliser += prob[i];
    }
    out.smax_sum += epsilon > 0 ? best + epsilon * std::log(normaliser) : best;
    for (size_t i = 0; i < scores.size(); ++i) {
      const double w = prob[i] / normaliser;
      std::copy(labellings[i].begin(), labellings[i].end(), y.begin() + v0);
      for (int64_t v = v0; v < v1; ++v) {
        out.marginals[data.state_offset[v] + y[v]] += w;
        add_row(data.var_features, data.state_offset[v] + y[v], w, model);
      }
      for (int64_t a = a0; a < a1; ++a) {
        const int64_t t = data.table_offset[a] + table_entry(data, a, y);
        out.marginals[states + t] += w;
        add_row(data.factor_features, t, w, model);
      }
    }
    // The truth covers the observed variables and the factors all of whose variables are.
    for (int64_t v = v0; v < v1; ++v) {
      if (data.label[v] < 0) continue;
      add_row(data.var_features, data.state_offset[v] + data.label[v], 1.0, truth);
      if (!state_offset.empty()) truth_offset += state_offset[data.state_offset[v] + data.label[v]];
    }
    for (int64_t a = a0; a < a1; ++a) {
      bool observed = true;
      for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
        observed = observed && data.label[data.factor_vars[k]] >= 0;
      if (observed)
        add_row(data.factor_features, data.table_offset[a] + table_entry(data, a, data.label), 1.0,
                truth);
    }
  }

  out.objective = out.smax_sum - truth_offset;
  out.gradient.resize(model.size());
  for (size_t r = 0; r < model.size(); ++r) {
    const double t = theta[r];
    out.objective += -truth[r] * t + C / p * std::pow(std::abs(t), p);
    out.gradient[r] = model[r] - truth[r] + C * std::pow(std::abs(t), p - 1) * ((t > 0) - (t < 0));
  }
  return out;
}

std::vector<double> exact_optimum(const Dataset& data, double epsilon, double loss_weight, double C,
                                  double p) {
  std::vector<double> theta(static_cast<size_t>(data.num_params), 0.0), trial(theta.size());
  double step = 1.0;
  for (int iteration = 0; iteration < 5000; ++iteration) {
    const ExactSolution here = solve_exactly(data, theta, epsilon, loss_weight, C, p);
    double norm2 = 0;
    for (double g : here.gradient) norm2 += g * g;
    if (norm2 < 1e-26) break;
    for (step *= 2;; step *= 0.5) {
      for (size_t r = 0; r < theta.size(); ++r) trial[r] = theta[r] - step * here.gradient[r];
      if (solve_exactly(data, trial, epsilon, loss_weight, C, p).objective <=
              here.objective - 0.5 * step * norm2 ||
          step < 1e-14)
        break;
    }
    theta.swap(trial);
  }
  return theta;
}

}  // namespace pdsp::testing
