#include "pdsp/inference/local_polytope.hpp"

#include <algorithm>

#include "pdsp/inference/table_ops.hpp"

namespace pdsp {

void make_factor_beliefs_consistent(const Dataset& data, const FactorGraph& graph, int64_t first,
                                    int64_t last, double* belief, Workspace& w) {
  const int64_t states = data.num_states();
  double* marginal = w.state.data();
  double* scratch = w.table.data();  // the entries' scale, then the product of the deficits
  for (int64_t a = first; a < last; ++a) {
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
}

}  // namespace pdsp
