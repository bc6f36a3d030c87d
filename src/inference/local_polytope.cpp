#include "pdsp/inference/local_polytope.hpp"

#include <algorithm>

#include "pdsp/inference/table_ops.hpp"

namespace pdsp {

void make_table_consistent(const Dataset& data, const FactorGraph& graph, int64_t a, double* belief,
                           Workspace& w) {
  const int64_t states = data.num_states();
  double* marginal = w.state.data();
  double* scratch = w.table.data();  // the entries' scale, then the product of the deficits
  double* table = belief + states + data.table_offset[a];
  const int64_t size = data.table_offset[a + 1] - data.table_offset[a];
  const int64_t slots_begin = data.factor_var_ptr[a];
  const int64_t slots_end = data.factor_var_ptr[a + 1];
  std::fill(scratch, scratch + size, 1.0);
  for (int64_t e = slots_begin; e < slots_end; ++e) {
    const LocalIndex v = data.factor_vars[e];
    const int64_t card = data.card[v];
    const double* variable = belief + data.state_offset[v];
    sum_along_slot(table, size, card, graph.stride_of(e), marginal);
    for (int64_t s = 0; s < card; ++s)
      marginal[s] = marginal[s] > variable[s] ? variable[s] / marginal[s] : 1.0;
    for_each_along_slot(scratch, size, card, graph.stride_of(e),
                        [marginal](double& x, int64_t s) { x = std::min(x, marginal[s]); });
  }
  double kept = 0.0;
  for (int64_t t = 0; t < size; ++t) kept += table[t] *= scratch[t];
  const double mass = 1.0 - kept;
  std::fill(scratch, scratch + size, mass);
  bool lacking = mass > 0;
  for (int64_t e = slots_begin; e < slots_end && lacking; ++e) {
    const LocalIndex v = data.factor_vars[e];
    const int64_t card = data.card[v];
    const double* variable = belief + data.state_offset[v];
    sum_along_slot(table, size, card, graph.stride_of(e), marginal);
    // Round-off can leave a deficit a few ulps below zero.
    double lack = 0.0;
    for (int64_t s = 0; s < card; ++s)
      lack += marginal[s] = std::max(0.0, variable[s] - marginal[s]);
    lacking = lack > 0;
    for (int64_t s = 0; s < card; ++s) marginal[s] /= lack;
    scale_along_slot(scratch, size, card, graph.stride_of(e), marginal);
  }
  if (lacking)
    for (int64_t t = 0; t < size; ++t) table[t] += scratch[t];
}

// Without contractions into fused multiply-adds, which the general loops cannot form across
// their passes (a product stored in one, added in the next): GCC would form them here across
// statements, other compilers (-ffp-contract=on) within one, hence the separate statements.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void make_binary_pair_consistent(double* t, const double* x, const double* y) {
  // The scale: each marginal a sum of two entries (a + b is b + a in floating point).
  auto scale = [](double marginal, double belief) {
    return marginal > belief ? belief / marginal : 1.0;
  };
  const double x0 = scale(t[0] + t[1], x[0]), x1 = scale(t[2] + t[3], x[1]);
  const double y0 = scale(t[0] + t[2], y[0]), y1 = scale(t[1] + t[3], y[1]);
  double kept = 0.0;
  kept += t[0] *= std::min(std::min(1.0, x0), y0);
  kept += t[1] *= std::min(std::min(1.0, x0), y1);
  kept += t[2] *= std::min(std::min(1.0, x1), y0);
  kept += t[3] *= std::min(std::min(1.0, x1), y1);
  const double mass = 1.0 - kept;
  if (!(mass > 0)) return;
  // What each variable lacks, over its sum (which is the mass up to round-off).
  const double dx0 = std::max(0.0, x[0] - (t[0] + t[1]));
  const double dx1 = std::max(0.0, x[1] - (t[2] + t[3]));
  const double lack_x = dx0 + dx1;
  if (!(lack_x > 0)) return;
  const double dy0 = std::max(0.0, y[0] - (t[0] + t[2]));
  const double dy1 = std::max(0.0, y[1] - (t[1] + t[3]));
  const double lack_y = dy0 + dy1;
  if (!(lack_y > 0)) return;
  const double rx0 = dx0 / lack_x, rx1 = dx1 / lack_x, ry0 = dy0 / lack_y, ry1 = dy1 / lack_y;
  const double added[4] = {mass * rx0 * ry0, mass * rx0 * ry1, mass * rx1 * ry0, mass * rx1 * ry1};
  for (int k = 0; k < 4; ++k) t[k] += added[k];
}

void make_factor_beliefs_consistent(const Dataset& data, const FactorGraph& graph, int64_t first,
                                    int64_t last, double* belief, Workspace& w) {
  const int64_t states = data.num_states();
  for (int64_t a = first; a < last; ++a) {
    const int64_t slot = data.factor_var_ptr[a];
    const bool binary_pair = data.factor_var_ptr[a + 1] - slot == 2 &&
                             data.card[data.factor_vars[slot]] == 2 &&
                             data.card[data.factor_vars[slot + 1]] == 2;
    if (binary_pair)
      make_binary_pair_consistent(belief + states + data.table_offset[a],
                                  belief + data.state_offset[data.factor_vars[slot]],
                                  belief + data.state_offset[data.factor_vars[slot + 1]]);
    else
      make_table_consistent(data, graph, a, belief, w);
  }
}

}  // namespace pdsp
