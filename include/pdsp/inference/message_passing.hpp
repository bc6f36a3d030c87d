#pragma once
// The general kernels of the primal-dual algorithm (design.md §2-4), for factors of any arity
// and variables of any cardinality: the block update of the messages of one variable, the
// objective F at fixed messages, and the beliefs with the dual terms.
#include <cstdint>
#include <span>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/kernels.hpp"
#include "pdsp/inference/shared_tables.hpp"

namespace pdsp {

class MessagePassing final : public Kernels {
 public:
  MessagePassing(const Dataset& data, const FactorGraph& graph, const CountingNumbers& counting,
                 double epsilon);

  // Lemma 3: sets lambda_{v->a} for every a in N(v) to the exact minimiser of F over that block.
  // Returns the largest change of a message entry.
  double update_variable(int64_t v, const double* potential, double* lambda, Workspace& w) const;
  // One pass over the variables of example n, in order.
  double sweep_example(int64_t n, const double* potential, double* lambda, Workspace& w) const;
  // Re-solves the blocks of the variables among `vars` with c_v = 0 (their F term is a hard max,
  // see design.md §5): needed before F is compared at a new theta. Called with the chunks of the
  // sweep plan, class by class, so that a split example re-solves as the whole one does.
  void resolve_kinks(std::span<const LocalIndex> vars, const double* potential,
                     MessageState& lambda, Workspace& w) const;
  bool has_kinks() const { return has_kinks_; }
  // The potentials were (re)computed into `potential`: rebuilds the shared tables of the pairwise
  // factors that have one (shared_tables.hpp), which calls with this array then use (also after
  // set_epsilon). Calls with another array, such as the baselines' per-example potentials, and
  // every call before this one, take the general path.
  void set_potentials(const double* potential);
  // Every factor reads its own table until the next set_potentials: for potentials written
  // example by example, where a shared table's representative may not be current.
  void use_own_tables();
  // The factors whose own tables these kernels never read in the potentials of set_potentials
  // (they read their shared table's representative's): FeatureIndex::potentials may skip them.
  std::span<const uint8_t> factors_without_own_table() const { return shared_.others(); }
  const SharedPairwiseTables& shared_tables() const { return shared_; }
  // The factors whose beliefs factor_beliefs does not write into the belief array, at the
  // potentials of set_potentials: the shared-table factors keep them folded
  // (SharedPairwiseTables::folded), and the moments of those beliefs come from
  // add_shared_moments. Empty when no factor has a shared table.
  std::span<const uint8_t> factors_with_folded_beliefs() const { return shared_.folded(); }
  // After factor_beliefs of every factor: sums the folded beliefs per table (in factor order, so
  // the same for any thread count); returns the part of the dual that factor_beliefs left out
  // for them (sum of b u over their tables), to be subtracted from BeliefTerms::dual. With
  // `examples`, their factors only (SharedPairwiseTables::fold).
  double fold_shared_beliefs(std::span<const int64_t> examples = {});
  // z += the moments of the folded beliefs (their tables' parameters), after fold_shared_beliefs.
  void add_shared_moments(std::span<double> z) const;
  // Writes the tables of the folded factors among [first, last) into `belief` (the layout of
  // kernels.hpp), after factor_beliefs.
  void unfold_beliefs(int64_t first, int64_t last, double* belief) const;
  // Whether the folded beliefs of factors [first, last) are finite.
  bool folded_beliefs_finite(int64_t first, int64_t last) const;

  MessageState make_message_state() const override;
  void export_messages(const MessageState& state, double* arena) const override;
  void import_messages(const double* arena, MessageState& state) const override;
  void pack_slots(std::span<const LocalIndex> slots, const MessageState& state,
                  std::vector<double>& out) const override;
  const double* unpack_slots(std::span<const LocalIndex> slots, const double* in,
                             MessageState& state) const override;
  void set_epsilon(double epsilon) override;
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

  // The same for every region of example n (used by the baselines and the tests).
  double example_objective(int64_t n, const double* potential, const double* lambda,
                           Workspace& w) const;
  BeliefTerms example_beliefs(int64_t n, const double* potential, const double* lambda,
                              const double* loss, double* belief, Workspace& w) const;

  double tau_var(int64_t v) const { return epsilon_ * counting_.var[v]; }
  double tau_factor(int64_t a) const { return epsilon_ * counting_.factor[a]; }

 private:
  // The overrides above on a plain arena, which the example methods use too.
  double factor_objective(int64_t first, int64_t last, const double* potential,
                          const double* lambda, Workspace& w) const;
  double variable_objective(int64_t first, int64_t last, const double* potential,
                            const double* lambda, Workspace& w) const;
  BeliefTerms factor_beliefs(int64_t first, int64_t last, const double* potential,
                             const double* lambda, double* belief, Workspace& w) const;
  BeliefTerms variable_beliefs(int64_t first, int64_t last, const double* potential,
                               const double* lambda, const double* loss, double* belief,
                               Workspace& w) const;
  // u_a(t) + sum over the factor's slots other than `skip` of lambda (skip < 0: all slots).
  void factor_scores(int64_t a, const double* potential, const double* lambda, int64_t skip,
                     double* out) const;
  // u_v(s) - sum_{a in N(v)} lambda_{v->a}(s).
  void var_scores(int64_t v, const double* potential, const double* lambda, double* out) const;
  // out = factor(e)'s belief marginalised to slot e's variable, computed from the messages
  // (w.table is its scratch).
  void factor_marginal(int64_t e, const double* potential, const double* lambda, Workspace& w,
                       double* out) const;
  // max_s |marginal(s) - b_v(s)| for slot e's variable v: the marginalisation violation.
  double marginal_gap(int64_t e, const double* marginal, const double* belief) const;
  // Variable v's belief from its scores (var_scores); at c_v = 0 a tie reads its factors'.
  void var_belief(int64_t v, const double* scores, const double* potential, const double* lambda,
                  double* out, Workspace& w) const;
  // Factor a's table in `potential`: its representative's in the potentials of set_potentials.
  const double* table_of(int64_t a, const double* potential) const {
    return potential + data_.num_states() +
           data_.table_offset[potential == shared_potential_ ? shared_.representative(a) : a];
  }
  // Factor a's shared table when it has a usable one for these potentials, else null.
  const SharedTable* shared_table(int64_t a, const double* potential) const {
    return potential == shared_potential_ ? shared_.of(a) : nullptr;
  }

  const Dataset& data_;
  const FactorGraph& graph_;
  const CountingNumbers& counting_;
  double epsilon_;
  bool has_kinks_ = false;
  SharedPairwiseTables shared_;
  const double* shared_potential_ = nullptr;  // the potentials shared_ was built from
};

}  // namespace pdsp
