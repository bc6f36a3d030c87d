#pragma once
// Naive mean field for a CRF with the potentials u (one of the baselines of Hazan & Urtasun's
// Figure 2): q(y) = prod_v q_v(y_v), coordinate ascent on the lower bound
//   L(q) = sum_v [<q_v, u_v> + H(q_v)] + sum_a E_q[u_a] <= log Z.
// Beliefs share the potential layout: q_v for the states, prod_k q_{a[k]} for the tables.
#include <cstdint>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/message_passing.hpp"

namespace pdsp {

class MeanField {
 public:
  // `chunks`: the graph's colour classes (chunk_classes), which the binary pairwise sweep visits;
  // kept by reference.
  MeanField(const Dataset& data, const FactorGraph& graph, const ExampleChunks& chunks);

  // One sweep of q_v updates over example n's variables in order; `belief` holds the current q
  // (uniform after reset). Returns the largest change of any q. Where every variable is binary
  // and every factor pairwise (image grids), the update is written out for two states and the
  // variables are visited by colour class (colouring.hpp), each class's exps in SIMD lanes:
  // another order of the same coordinate updates, which reaches the same fixed point when there
  // is one, about 5x faster a sweep.
  double sweep(int64_t n, const double* potential, double* belief, Workspace& w) const;
  // The factor beliefs of example n from its q (written into `belief`) and the mean-field lower
  // bound L(q) on its log Z.
  double bound(int64_t n, const double* potential, double* belief) const;
  // Sets q of example n to uniform.
  void reset(int64_t n, double* belief) const;

 private:
  // Expected factor potential E[u_a | y_v = s] under the other variables' q, for every s.
  void expected_factor_score(int64_t e, const double* potential, const double* belief, double* out,
                             Workspace& w) const;
  void factor_belief(int64_t a, double* belief) const;
  double binary_pairwise_sweep(int64_t n, const double* potential, double* belief,
                               Workspace& w) const;

  const Dataset& data_;
  const FactorGraph& graph_;
  bool binary_pairwise_ = false;
  const ExampleChunks& chunks_;
};

}  // namespace pdsp
