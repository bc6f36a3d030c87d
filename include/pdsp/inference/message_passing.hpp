#pragma once
// The per-example kernels of the primal-dual algorithm (design.md §2-4): the block update of the
// messages of one variable, the objective F of one example at fixed messages, and its beliefs
// with the dual terms. Potentials and beliefs share one layout: [every (v, s) | every (a, t)].
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

// Scratch memory of one thread, sized once for the largest region so hot loops never allocate.
struct Workspace {
  explicit Workspace(const FactorGraph& graph);
  std::vector<double> table;  // one factor table
  std::vector<double> mu;     // mu_{a->v} of every factor of one variable
  std::vector<double> state;  // one variable's states
};

// What the beliefs of one example contribute to the logged quantities.
struct ExampleTerms {
  double objective = 0;  // this example's part of F
  double dual = 0;       // sum tau H(b) + sum b_v e_v
  double violation = 0;  // max |sum_{t \ v} b_a(t) - b_v(s)|
};

class MessagePassing {
 public:
  MessagePassing(const Dataset& data, const FactorGraph& graph, const CountingNumbers& counting,
                 double epsilon);

  // Lemma 3: sets lambda_{v->a} for every a in N(v) to the exact minimiser of F over that block.
  // Returns the largest change of a message entry.
  double update_variable(int64_t v, const double* potential, double* lambda, Workspace& w) const;
  // One pass over the variables of example n, in order.
  double sweep_example(int64_t n, const double* potential, double* lambda, Workspace& w) const;
  // Re-solves the blocks of the variables with c_v = 0 (their F term is a hard max, see
  // design.md §5): needed before F is compared at a new theta.
  void resolve_kinks_example(int64_t n, const double* potential, double* lambda,
                             Workspace& w) const;
  bool has_kinks() const { return has_kinks_; }

  double example_objective(int64_t n, const double* potential, const double* lambda,
                           Workspace& w) const;
  // Writes the beliefs of example n into `belief` (same layout as the potentials). `loss` holds
  // e_v(s) per state, or is null when there is no loss augmentation.
  ExampleTerms example_beliefs(int64_t n, const double* potential, const double* lambda,
                               const double* loss, double* belief, Workspace& w) const;

  double tau_var(int64_t v) const { return epsilon_ * counting_.var[v]; }
  double tau_factor(int64_t a) const { return epsilon_ * counting_.factor[a]; }

 private:
  // u_a(t) + sum over the factor's slots other than `skip` of lambda (skip < 0: all slots).
  void factor_scores(int64_t a, const double* potential, const double* lambda, int64_t skip,
                     double* out) const;
  // u_v(s) - sum_{a in N(v)} lambda_{v->a}(s).
  void var_scores(int64_t v, const double* potential, const double* lambda, double* out) const;
  void var_belief(int64_t v, const double* potential, const double* lambda, const double* belief,
                  double* out, Workspace& w) const;

  const Dataset& data_;
  const FactorGraph& graph_;
  const CountingNumbers& counting_;
  double epsilon_;
  bool has_kinks_ = false;
};

}  // namespace pdsp
