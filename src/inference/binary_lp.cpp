#include "pdsp/inference/binary_lp.hpp"

#include <algorithm>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// The example's variables v0.. and factors a0..: the first and second variable of factor a, as
// offsets from v0.
struct ExampleView {
  const Dataset& data;
  int64_t n, v0, a0, vars, factors;
  ExampleView(const Dataset& d, int64_t example)
      : data(d),
        n(example),
        v0(d.var_offset[example]),
        a0(d.factor_offset[example]),
        vars(d.var_offset[example + 1] - v0),
        factors(d.factor_offset[example + 1] - a0) {}
  int64_t first(int64_t a) const { return data.factor_vars[data.factor_var_ptr[a0 + a]] - v0; }
  int64_t second(int64_t a) const { return data.factor_vars[data.factor_var_ptr[a0 + a] + 1] - v0; }
  const double* var_potential(std::span<const double> u, int64_t v) const {
    return u.data() + data.state_offset[v0 + v];
  }
  const double* table_potential(std::span<const double> u, int64_t a) const {
    return u.data() + data.num_states() + data.table_offset[a0 + a];
  }
};

// mu(1, 1) of a factor whose variables have x_i, x_j, at the top or bottom of its range.
double both_on(double xi, double xj, bool top) {
  return top ? std::min(xi, xj) : std::max(0.0, xi + xj - 1.0);
}

// The factor's beliefs in table order t = 2 s_i + s_j.
void factor_beliefs(double xi, double xj, bool top, double mu[4]) {
  mu[3] = both_on(xi, xj, top);
  mu[2] = xi - mu[3];
  mu[1] = xj - mu[3];
  mu[0] = 1.0 - xi - xj + mu[3];
}

}  // namespace

bool is_binary_pairwise(const Dataset& data) {
  for (int64_t a = 0; a < data.num_factors(); ++a)
    if (data.arity(a) != 2) return false;
  return std::all_of(data.card.begin(), data.card.end(), [](int32_t k) { return k == 2; });
}

void require_binary_pairwise(const Dataset& data, const std::string& why) {
  for (int64_t v = 0; v < data.num_vars(); ++v)
    if (data.card[v] != 2)
      throw InputError(data.source() + ": /vars/card[" + std::to_string(data.file_var(v)) +
                       "] is " + std::to_string(data.card[v]) + ": " + why +
                       " needs binary variables");
  for (int64_t a = 0; a < data.num_factors(); ++a)
    if (data.arity(a) != 2)
      throw InputError(data.source() + ": factor " + std::to_string(data.file_factor(a)) + " has " +
                       std::to_string(data.arity(a)) + " variables: " + why +
                       " needs pairwise factors");
}

HalfIntegralVertex labelled_vertex(const Dataset& data, int64_t n) {
  const ExampleView e(data, n);
  HalfIntegralVertex vertex{std::vector<uint8_t>(static_cast<size_t>(e.vars)),
                            std::vector<uint8_t>(static_cast<size_t>(e.factors), 0)};
  for (int64_t v = 0; v < e.vars; ++v) vertex.level[v] = data.label[e.v0 + v] == 1 ? 2 : 0;
  return vertex;
}

double vertex_score(const Dataset& data, int64_t n, const HalfIntegralVertex& vertex,
                    std::span<const double> potential) {
  const ExampleView e(data, n);
  double score = 0;
  for (int64_t v = 0; v < e.vars; ++v) {
    const double x = 0.5 * vertex.level[v];
    const double* u = e.var_potential(potential, v);
    score += (1.0 - x) * u[0] + x * u[1];
  }
  for (int64_t a = 0; a < e.factors; ++a) {
    double mu[4];
    factor_beliefs(0.5 * vertex.level[e.first(a)], 0.5 * vertex.level[e.second(a)],
                   vertex.top[a] != 0, mu);
    const double* u = e.table_potential(potential, a);
    score += mu[0] * u[0] + mu[1] * u[1] + mu[2] * u[2] + mu[3] * u[3];
  }
  return score;
}

void add_vertex_beliefs(const Dataset& data, int64_t n, const HalfIntegralVertex& vertex,
                        double scale, std::span<double> weight) {
  const ExampleView e(data, n);
  for (int64_t v = 0; v < e.vars; ++v) {
    const double x = 0.5 * vertex.level[v];
    double* w = weight.data() + data.state_offset[e.v0 + v];
    w[0] += scale * (1.0 - x);
    w[1] += scale * x;
  }
  for (int64_t a = 0; a < e.factors; ++a) {
    double mu[4];
    factor_beliefs(0.5 * vertex.level[e.first(a)], 0.5 * vertex.level[e.second(a)],
                   vertex.top[a] != 0, mu);
    double* w = weight.data() + data.num_states() + data.table_offset[e.a0 + a];
    for (int t = 0; t < 4; ++t) w[t] += scale * mu[t];
  }
}

// Minimises the energy E = -score over the doubled graph: node v stands for x_v, node vars + v
// for 1 - x_v, and every term of E enters as the mean of its form in x and its form in 1 - x,
// written with cut terms c [p = 0, q = 1] only (source side = 0), which are submodular whichever
// sign E's pairwise part has. Each factor's E(s_i, s_j) = E(0,0) + (E(1,0) - E(0,0)) x_i
// + (E(1,1) - E(1,0)) x_j + K (1 - x_i) x_j with K = E(0,1) + E(1,0) - E(0,0) - E(1,1); with
// K < 0 the last term is K x_j + |K| x_i x_j, and x_i x_j = [1 - x_j = 0, x_i = 1]. The minimum
// cut's x and x' give the LP optimum x = (x + 1 - x') / 2 (Boros & Hammer's roof duality).
template <class Cut>
HalfIntegralVertex BinaryLpOracle::roof_dual(const Dataset& data, int64_t n,
                                             std::span<const double> potential, Cut& cut) {
  const ExampleView e(data, n);
  const int vars = static_cast<int>(e.vars);
  cut.reset(2 * vars);
  linear_.assign(static_cast<size_t>(vars), 0.0);
  for (int v = 0; v < vars; ++v) {
    const double* u = e.var_potential(potential, v);
    linear_[v] = u[0] - u[1];
  }
  for (int64_t a = 0; a < e.factors; ++a) {
    const int i = static_cast<int>(e.first(a)), j = static_cast<int>(e.second(a));
    const double* u = e.table_potential(potential, a);
    const double E00 = -u[0], E01 = -u[1], E10 = -u[2], E11 = -u[3];
    linear_[i] += E10 - E00;
    linear_[j] += E11 - E10;
    const double K = E01 + E10 - E00 - E11;
    if (K >= 0) {
      cut.add_arc(i, j, K / 2);                // [x_i = 0, x_j = 1]
      cut.add_arc(vars + j, vars + i, K / 2);  // [x'_j = 0, x'_i = 1]
    } else {
      linear_[j] += K;
      cut.add_arc(vars + j, i, -K / 2);  // [x'_j = 0, x_i = 1]
      cut.add_arc(vars + i, j, -K / 2);  // [x'_i = 0, x_j = 1]
    }
  }
  for (int v = 0; v < vars; ++v) {
    const double c = linear_[v] / 2;  // c x_v + c (1 - x'_v), constants dropped
    if (c > 0) {
      cut.add_arc(cut.source(), v, c);
      cut.add_arc(vars + v, cut.sink(), c);
    } else {
      cut.add_arc(v, cut.sink(), -c);
      cut.add_arc(cut.source(), vars + v, -c);
    }
  }
  cut.solve();
  HalfIntegralVertex vertex{std::vector<uint8_t>(static_cast<size_t>(vars)),
                            std::vector<uint8_t>(static_cast<size_t>(e.factors), 0)};
  for (int v = 0; v < vars; ++v) {
    const int x = cut.on_source_side(v) ? 0 : 1;
    const int complement = cut.on_source_side(vars + v) ? 0 : 1;
    vertex.level[v] = static_cast<uint8_t>(x + 1 - complement);
  }
  for (int64_t a = 0; a < e.factors; ++a) {
    if (vertex.level[e.first(a)] != 1 || vertex.level[e.second(a)] != 1) continue;
    // The score's coefficient of mu(1, 1) once the marginals are fixed.
    const double* u = e.table_potential(potential, a);
    vertex.top[a] = u[0] - u[1] - u[2] + u[3] > 0 ? 1 : 0;
  }
  return vertex;
}

HalfIntegralVertex BinaryLpOracle::maximise(const Dataset& data, int64_t n,
                                            std::span<const double> potential) {
  if (2 * (data.var_offset[n + 1] - data.var_offset[n]) <= SmallMinCut::kMaxNodes)
    return roof_dual(data, n, potential, small_cut_);
  return roof_dual(data, n, potential, cut_);
}

}  // namespace pdsp
