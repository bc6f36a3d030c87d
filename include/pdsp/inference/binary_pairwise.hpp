#pragma once
// Kernels specialised for graphs whose variables are all binary and whose factors are all
// pairwise (2x2 tables), such as image grids. They compute what MessagePassing computes, with
// the algebra of two states written out so that loops run over structure-of-arrays lanes with
// vectorised exp/log:
// - F and the beliefs do not change when a message is shifted by a constant, so a binary
//   message is kept as one number h = (lambda(1) - lambda(0)) / 2, i.e. lambda = (-h, h): half
//   the memory and memory traffic of the arena;
// - mu_{a->v}(1) - mu_{a->v}(0) = [u(1,0) - u(0,0)] + tau_a [sp(A) - sp(B)], sp the softplus,
//   A = (u(1,1) - u(1,0) + 2 h_w) / tau_a and B = (u(0,1) - u(0,0) + 2 h_w) / tau_a, where
//   u(s, t) is the table with v in state s and its partner w in state t: two exp and one log per
//   message block instead of four exp and two log;
// - Lemma 3 then sets 2 h_{v->a} = (c_a / chat_v) (u_v(1) - u_v(0) + sum_b Dmu_b) - Dmu_a.
// With all factors pairwise, slot e of factor a is 2a + k, its partner is e ^ 1, and the
// factor's table starts at 4a. The block updates of factors whose table is their type's shared
// table (format 2, as yeast's label pairs; shared_tables.hpp) read the table of their type's
// representative: 91 tables that stay in the L1 cache instead of 136,500 copies streamed from
// memory in every sweep. The factor loops of F and the beliefs still read each factor's own
// copy: reading the representatives' there made GCC call the scalar exp and log (2.5x slower).
// The messages may be kept in single precision (Message = float): half the memory traffic of the
// messages, with every sum and exp/log still in double. The objective is evaluated exactly at the
// stored messages, and a block update rounded to float is off its minimum by a second-order
// amount, so F, the beliefs and the step search see no change beyond round-off
// (docs/benchmarks.md has the measurement). Potentials stay double: their rounding would enter F
// directly and the step search compares F values that differ by little.
#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/kernels.hpp"

namespace pdsp {

// The problems these kernels cover: every variable binary, every factor of arity 2, eps > 0,
// every c_a > 0 and no c_v == 0 (those need the tie rules of the general kernels).
bool binary_pairwise_kernels_apply(const Dataset& data, const CountingNumbers& counting,
                                   double epsilon);

// Which table the block updates of a factor with a shared table read: its type's representative's
// (the potentials of every example are current at once, as the primal-dual learners keep them),
// or its own (the likelihood baselines change one example's tables at a time: SGD's example
// potentials, the annealed start's scaled tables).
enum class SharedTableReads { Representative, Own };

template <class Message>
class BinaryPairwiseKernels final : public Kernels {
 public:
  BinaryPairwiseKernels(const Dataset& data, const FactorGraph& graph,
                        const CountingNumbers& counting, double epsilon,
                        SharedTableReads reads = SharedTableReads::Representative);

  MessageState make_message_state() const override;
  void export_messages(const MessageState& state, double* arena) const override;
  void import_messages(const double* arena, MessageState& state) const override;
  void pack_slots(std::span<const LocalIndex> slots, const MessageState& state,
                  std::vector<double>& out) const override;
  const double* unpack_slots(std::span<const LocalIndex> slots, const double* in,
                             MessageState& state) const override;
  void set_epsilon(double epsilon) override { epsilon_ = epsilon; }
  double update_variables(std::span<const LocalIndex> vars, const double* potential,
                          MessageState& lambda, Workspace& w) const override;
  double factor_objective(int64_t first, int64_t last, const double* potential,
                          const MessageState& lambda, Workspace& w) const override;
  double variable_objective(int64_t first, int64_t last, const double* potential,
                            const MessageState& lambda, Workspace& w) const override;
  BeliefTerms factor_beliefs(int64_t first, int64_t last, const double* potential,
                             const MessageState& lambda, double* belief,
                             Workspace& w) const override;
  BeliefTerms variable_beliefs(int64_t first, int64_t last, const double* potential,
                               const MessageState& lambda, const double* loss, double* belief,
                               Workspace& w) const override;

 private:
  // What the variable terms of [first, last) read, indexed from 0: the scores
  // u_v(s) - sum_a lambda_{v->a}(s) of s = 0 and s = 1 (lanes a and b) and tau_v / eps.
  struct VariableLanes {
    const double* x0;
    const double* x1;
    const double* counting;
  };
  VariableLanes variable_lanes(int64_t first, int64_t last, const double* potential,
                               const Message* lambda, Workspace& w) const;

  // The factor whose table factor a's block updates read: its shared table's representative, or
  // a itself.
  int64_t table_factor(int64_t a) const { return table_factor_.empty() ? a : table_factor_[a]; }

  const LocalIndex* factor_vars_;         // the two variables of factor a at 2a, 2a + 1
  std::vector<LocalIndex> table_factor_;  // [factors], empty when no factor shares a table
  const FactorGraph& graph_;
  const CountingNumbers& counting_;
  double epsilon_;
  int64_t states_;  // where the factor tables start in the potentials
};

extern template class BinaryPairwiseKernels<double>;
extern template class BinaryPairwiseKernels<float>;

}  // namespace pdsp
