#pragma once
// Naive mean field for a CRF with the potentials u (one of the baselines of Hazan & Urtasun's
// Figure 2): q(y) = prod_v q_v(y_v), coordinate ascent on the lower bound
//   L(q) = sum_v [<q_v, u_v> + H(q_v)] + sum_a E_q[u_a] <= log Z.
// Beliefs share the potential layout: q_v for the states, prod_k q_{a[k]} for the tables.
#include <cstdint>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/message_passing.hpp"

namespace pdsp {

class MeanField {
 public:
  MeanField(const Dataset& data, const FactorGraph& graph) : data_(data), graph_(graph) {}

  // Sweeps of q_v updates over example n until no q changes by more than `tol` (at most
  // `max_sweeps`); `belief` holds the current q (uniform on first use) and receives the factor
  // beliefs. Returns the lower bound L(q) on log Z of the example.
  double infer(int64_t n, const double* potential, double* belief, int max_sweeps, double tol,
               Workspace& w) const;
  // Sets q of example n to uniform.
  void reset(int64_t n, double* belief) const;

 private:
  // Expected factor potential E[u_a | y_v = s] under the other variables' q, for every s.
  void expected_factor_score(int64_t e, const double* potential, const double* belief, double* out,
                             Workspace& w) const;
  void factor_belief(int64_t a, double* belief) const;

  const Dataset& data_;
  const FactorGraph& graph_;
};

}  // namespace pdsp
