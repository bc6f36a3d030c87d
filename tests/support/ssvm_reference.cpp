#include "support/ssvm_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "support/tiny_graphs.hpp"

namespace pdsp::testing {
namespace {

// One point of an example: its feature difference phi(m) - phi(y) and its loss.
struct Point {
  std::vector<double> feature_change;
  double loss = 0;
};

void add_row(const SparseRows& rows, int64_t row, double weight, std::vector<double>& out) {
  for (int64_t k = rows.ptr[row]; k < rows.ptr[row + 1]; ++k)
    out[rows.param[k]] += weight * rows.value[k];
}

// The point of example n with variable marginals `var` (per state, from the example's first
// state) and factor marginals `table` (per table entry, from its first entry).
Point make_point(const Dataset& data, int64_t n, const std::vector<double>& var,
                 const std::vector<double>& table, double loss_weight) {
  Point point{std::vector<double>(static_cast<size_t>(data.num_params), 0.0), 0.0};
  const int64_t first_state = data.state_offset[data.var_offset[n]];
  const int64_t first_entry = data.table_offset[data.factor_offset[n]];
  for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v) {
    for (int64_t s = 0; s < data.card[v]; ++s) {
      const double mass = var[data.state_offset[v] + s - first_state];
      add_row(data.var_features, data.state_offset[v] + s, mass, point.feature_change);
      if (s != data.label[v]) point.loss += loss_weight * mass;
    }
    add_row(data.var_features, data.state_offset[v] + data.label[v], -1.0, point.feature_change);
  }
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a) {
    int64_t truth = 0;
    for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
      truth = truth * data.card[data.factor_vars[k]] + data.label[data.factor_vars[k]];
    for (int64_t t = 0; t < data.table_offset[a + 1] - data.table_offset[a]; ++t)
      add_row(data.factor_features, data.table_offset[a] + t,
              table[data.table_offset[a] + t - first_entry], point.feature_change);
    add_row(data.factor_features, data.table_offset[a] + truth, -1.0, point.feature_change);
  }
  return point;
}

std::vector<Point> labellings(const Dataset& data, int64_t n, double loss_weight) {
  const int64_t v0 = data.var_offset[n], v1 = data.var_offset[n + 1];
  const int64_t a0 = data.factor_offset[n], a1 = data.factor_offset[n + 1];
  std::vector<int32_t> y(static_cast<size_t>(v1 - v0), 0);
  std::vector<Point> points;
  while (true) {
    std::vector<double> var(static_cast<size_t>(data.state_offset[v1] - data.state_offset[v0]));
    std::vector<double> table(static_cast<size_t>(data.table_offset[a1] - data.table_offset[a0]));
    for (int64_t v = v0; v < v1; ++v)
      var[data.state_offset[v] - data.state_offset[v0] + y[v - v0]] = 1.0;
    for (int64_t a = a0; a < a1; ++a) {
      int64_t t = 0;
      for (int64_t k = data.factor_var_ptr[a]; k < data.factor_var_ptr[a + 1]; ++k)
        t = t * data.card[data.factor_vars[k]] + y[data.factor_vars[k] - v0];
      table[data.table_offset[a] - data.table_offset[a0] + t] = 1.0;
    }
    points.push_back(make_point(data, n, var, table, loss_weight));
    int64_t v = v1 - 1;
    while (v >= v0 && ++y[v - v0] == data.card[v]) y[v-- - v0] = 0;
    if (v < v0) return points;
  }
}

// Every point with x_v = mu_v(1) in {0, 1/2, 1} and, per factor (i, j), mu(1, 1) at either end
// of the range the local polytope allows, [max(0, x_i + x_j - 1), min(x_i, x_j)]: a vertex of the
// polytope has its factor marginals there (else it moves along the factor alone).
std::vector<Point> half_integral_points(const Dataset& data, int64_t n, double loss_weight) {
  const int64_t v0 = data.var_offset[n], v1 = data.var_offset[n + 1];
  const int64_t a0 = data.factor_offset[n], a1 = data.factor_offset[n + 1];
  for (int64_t v = v0; v < v1; ++v)
    if (data.card[v] != 2) throw std::invalid_argument("half-integral points: binary variables");
  for (int64_t a = a0; a < a1; ++a)
    if (data.factor_var_ptr[a + 1] - data.factor_var_ptr[a] != 2)
      throw std::invalid_argument("half-integral points: pairwise factors");
  std::vector<int> level(static_cast<size_t>(v1 - v0), 0);  // x_v = level / 2
  std::vector<Point> points;
  while (true) {
    std::vector<int> end(static_cast<size_t>(a1 - a0), 0);  // 0: low end, 1: high end
    while (true) {
      std::vector<double> var(static_cast<size_t>(2 * (v1 - v0)));
      std::vector<double> table(static_cast<size_t>(4 * (a1 - a0)));
      for (int64_t v = v0; v < v1; ++v) {
        var[2 * (v - v0) + 1] = 0.5 * level[v - v0];
        var[2 * (v - v0)] = 1.0 - 0.5 * level[v - v0];
      }
      for (int64_t a = a0; a < a1; ++a) {
        const double xi = var[2 * (data.factor_vars[data.factor_var_ptr[a]] - v0) + 1];
        const double xj = var[2 * (data.factor_vars[data.factor_var_ptr[a] + 1] - v0) + 1];
        const double both = end[a - a0] ? std::min(xi, xj) : std::max(0.0, xi + xj - 1.0);
        double* t = table.data() + 4 * (a - a0);  // t = 2 s_i + s_j
        t[3] = both;
        t[2] = xi - both;
        t[1] = xj - both;
        t[0] = 1.0 - xi - xj + both;
      }
      points.push_back(make_point(data, n, var, table, loss_weight));
      int64_t a = a1 - a0 - 1;
      while (a >= 0 && ++end[a] == 2) end[a--] = 0;
      if (a < 0) break;
    }
    int64_t v = v1 - v0 - 1;
    while (v >= 0 && ++level[v] == 3) level[v--] = 0;
    if (v < 0) return points;
  }
}

std::vector<std::vector<Point>> points_of(const Dataset& data, double loss_weight,
                                          SsvmPoints kind) {
  std::vector<std::vector<Point>> points;
  for (int64_t n = 0; n < data.num_examples(); ++n)
    points.push_back(kind == SsvmPoints::Labellings ? labellings(data, n, loss_weight)
                                                    : half_integral_points(data, n, loss_weight));
  return points;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

double primal(const std::vector<std::vector<Point>>& points, std::span<const double> theta,
              double C) {
  const std::vector<double> t(theta.begin(), theta.end());
  double value = 0.5 * C * dot(t, t);
  for (const auto& example : points) {
    double best = -INFINITY;
    for (const Point& m : example) best = std::max(best, dot(t, m.feature_change) + m.loss);
    value += best;
  }
  return value;
}

// Euclidean projection of x onto the probability simplex (sort, find the threshold).
void project_to_simplex(std::span<double> x) {
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.rbegin(), sorted.rend());
  double sum = 0, threshold = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    sum += sorted[i];
    const double candidate = (sum - 1.0) / static_cast<double>(i + 1);
    if (sorted[i] - candidate > 0) threshold = candidate;
  }
  for (double& v : x) v = std::max(0.0, v - threshold);
}

}  // namespace

double ssvm_primal(const Dataset& data, std::span<const double> theta, double loss_weight, double C,
                   SsvmPoints kind) {
  return primal(points_of(data, loss_weight, kind), theta, C);
}

SsvmReference solve_ssvm(const Dataset& data, double loss_weight, double C, SsvmPoints kind) {
  const auto points = points_of(data, loss_weight, kind);
  const size_t params = static_cast<size_t>(data.num_params);
  // alpha for every point of every example, one block per example; the Lipschitz constant of
  // the dual's gradient is at most the squared Frobenius norm of the feature changes over C.
  std::vector<size_t> first{0};
  double lipschitz = 0;
  for (const auto& example : points) {
    first.push_back(first.back() + example.size());
    for (const Point& m : example) lipschitz += dot(m.feature_change, m.feature_change) / C;
  }
  lipschitz = std::max(lipschitz, 1e-12);
  const size_t total = first.back();
  std::vector<double> alpha(total, 0.0), previous(total), y(total), gradient(total);
  for (size_t n = 0; n < points.size(); ++n) alpha[first[n]] = 1.0;
  previous = alpha;
  y = alpha;
  // -C theta(alpha) = sum alpha (phi(m) - phi(y)), and the negated dual f = -D.
  const auto feature_sum = [&](const std::vector<double>& a) {
    std::vector<double> sum(params, 0.0);
    for (size_t n = 0; n < points.size(); ++n)
      for (size_t i = 0; i < points[n].size(); ++i)
        for (size_t r = 0; r < params; ++r)
          sum[r] += a[first[n] + i] * points[n][i].feature_change[r];
    return sum;
  };
  const auto negated_dual = [&](const std::vector<double>& a) {
    const std::vector<double> g = feature_sum(a);
    double loss = 0;
    for (size_t n = 0; n < points.size(); ++n)
      for (size_t i = 0; i < points[n].size(); ++i) loss += a[first[n] + i] * points[n][i].loss;
    return dot(g, g) / (2 * C) - loss;
  };
  SsvmReference out;
  double momentum = 1.0, f_alpha = negated_dual(alpha);
  for (int iteration = 0; iteration < 2000000; ++iteration) {
    const std::vector<double> g = feature_sum(y);
    for (size_t n = 0; n < points.size(); ++n)
      for (size_t i = 0; i < points[n].size(); ++i)
        gradient[first[n] + i] = dot(g, points[n][i].feature_change) / C - points[n][i].loss;
    previous = alpha;
    for (size_t j = 0; j < total; ++j) alpha[j] = y[j] - gradient[j] / lipschitz;
    for (size_t n = 0; n < points.size(); ++n)
      project_to_simplex(std::span<double>(alpha).subspan(first[n], first[n + 1] - first[n]));
    const double f_new = negated_dual(alpha);
    // Restart the momentum when the dual gets worse (O'Donoghue & Candes' adaptive restart).
    const double next = f_new > f_alpha ? 1.0 : 0.5 * (1 + std::sqrt(1 + 4 * momentum * momentum));
    const double beta = f_new > f_alpha ? 0.0 : (momentum - 1) / next;
    momentum = next;
    f_alpha = f_new;
    for (size_t j = 0; j < total; ++j) y[j] = alpha[j] + beta * (alpha[j] - previous[j]);
    if (iteration % 100 != 0) continue;
    out.theta = feature_sum(alpha);
    for (double& t : out.theta) t /= -C;
    out.dual = -f_alpha;
    out.primal = primal(points, out.theta, C);
    if (out.primal - out.dual <= 1e-10 * std::max(1.0, std::abs(out.primal))) return out;
  }
  throw std::runtime_error("solve_ssvm: no certified optimum within the iteration limit");
}

std::pair<Dataset, double> loops_with_a_loose_relaxation() {
  const GraphShape triangle{{2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}}};
  Dataset data = random_dataset({triangle, grid_shape(2, 2), triangle}, 4, 12);
  const double relaxed = solve_ssvm(data, 1.0, 1.0, SsvmPoints::HalfIntegralLocalPolytope).primal;
  const double exact = solve_ssvm(data, 1.0, 1.0, SsvmPoints::Labellings).primal;
  return {std::move(data), relaxed - exact};
}

}  // namespace pdsp::testing
