#pragma once
// Everything one rank owns for its slice of examples: potentials, the message arena, beliefs
// and the OpenMP-parallel loops that run the kernels over them. It knows nothing of MPI: the
// trainer combines the local quantities of all ranks. Threads own whole examples, or share each
// example colour class by colour class when there are too few examples to keep them busy; both
// ways run the same chunks and sum them in the same order, so results do not depend on the
// thread count.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/allocation.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/inference/binary_pairwise.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/halo_exchange.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "pdsp/inference/work_plan.hpp"
#include "pdsp/learning/inference_engine.hpp"
#include "pdsp/learning/problem_setup.hpp"
#include "pdsp/learning/training_state.hpp"

namespace pdsp {

struct LocalEvaluation {
  double objective = 0;  // sum of the smax terms of F over this rank's examples
  double dual = 0;       // sum of the entropy and loss terms of D
  // sum b_v(s) (e_v(s) + offset_v(s)): the part of `dual` that is not entropy
  double expected_loss = 0;
  double violation = 0;  // largest marginalisation violation
  bool finite = true;    // FiniteCheck::Local: every value on this rank was finite
};

// What LocalProblem::keep_messages copies.
enum class MessagesKept { All, ForASweep };

// `final`, so that calls through a LocalProblem& need no virtual dispatch; through
// CheckpointedMessages the checkpoints read and write its messages.
class LocalProblem final : public CheckpointedMessages {
 public:
  // `model` turns theta into potentials; null: the data's features (FeatureIndex, linear).
  LocalProblem(const Dataset& data, const ProblemSettings& settings,
               std::unique_ptr<const PotentialModel> model = nullptr);

  const Dataset& data() const override { return data_; }
  const FactorGraph& graph() const { return graph_; }
  const CountingNumbers& counting() const { return counting_; }
  const PotentialModel& model() const { return engine_.model(); }
  int64_t num_params() const override { return engine_.model().num_params(); }
  // eps > 0 with a negative counting number: F is not convex in the messages and the sweeps
  // converge to a saddle point (design.md §5, Claim 3).
  bool is_saddle_problem() const;
  // Which kernels run and how threads share the work, for logs.
  std::string kernel_name() const;
  bool threads_inside_examples() const { return threads_inside_examples_; }
  // Which pairwise factors share their type's table (the general kernels').
  const SharedPairwiseTables& shared_tables() const { return general_.shared_tables(); }

  // u = loss + offset + f(theta) (PotentialModel::forward); with a selection (select_examples)
  // only the selected examples' potentials, which their factors then read from their own tables
  // (no shared tables, MessagePassing::use_own_tables).
  void set_theta(std::span<const double> theta);
  // An additive term of the variables' potentials, one value per state ([states]), that is not
  // learned (non-local energies, a message bias): from the next set_theta on, until replaced;
  // empty: none. It enters the ground-truth score, and the dual terms as the loss does.
  void set_potential_offset(std::span<const double> offset);
  // Sweeps, objective(), evaluate(), model_moments() and the ground-truth terms cover these
  // examples only (distinct, in any order; empty: all, as at the start), for learners that go
  // over the data a few examples at a time. Not on a shard of a split example, whose sweeps
  // exchange messages with the other shards; consistent_beliefs covers all examples only.
  void select_examples(std::span<const int64_t> examples);
  std::span<const int64_t> selected_examples() const { return selected_; }
  // The temperature the kernels run at: eps, or at eps = 0 the smoothing temperature (above).
  double temperature() const { return temperature_; }
  void set_temperature(double epsilon);
  // Runs `count` sweeps; returns the largest message change of the last one.
  double sweep(int count);
  // Re-solves the blocks of the variables with c_v = 0 (MessagePassing::resolve_kinks); on a
  // data set spread over ranks, every rank calls it at the same point.
  void resolve_kinks();
  // F at the current messages; not checked, so that a trial step whose potentials overflow is
  // simply rejected.
  double objective();
  // Computes the beliefs and the quantities that depend on them. Collective over the ranks that
  // share the data file (Dataset::communicator): when a potential, a message or a belief on any
  // rank is not finite, every rank throws the lowest such rank's explanation. A learner that
  // reduces the check with its own sums instead (one allreduce per step) asks for
  // FiniteCheck::Local, reads LocalEvaluation::finite, and calls require_finite on every rank
  // when some rank's was false.
  enum class FiniteCheck { Collective, Local };
  LocalEvaluation evaluate(FiniteCheck check = FiniteCheck::Collective);
  // Throws (collectively) when a potential, a message or a belief of the last evaluation is not
  // finite on some rank, with that rank's explanation.
  void require_finite() const;
  // z = J(theta)^T b: the moments of the last evaluation's beliefs through the model.
  void model_moments(std::span<double> z) const;
  // The beliefs of the last evaluate() made consistent (local_polytope.hpp): the variable
  // beliefs as they are, the factor tables repaired (folded ones unfolded first), a point of the
  // local polytope whatever the messages. Writes their moments to z and returns their entropy
  // terms, sum over this rank's regions of tau_r H(b_r) at the current temperature. Their
  // expected loss is that of the beliefs, which the repair does not change. For the
  // certificates: the dual at such a point bounds the optimum from below.
  double consistent_beliefs(std::span<double> z);
  // d of design.md §2 through the model at the current theta: J(theta)^T times the indicator of
  // the ground-truth labelling, over the regions this rank owns (linear: the feature sums at the
  // ground truth, the same at every theta). Needs labels.
  void ground_truth_moments(std::span<double> d) const;
  // model_moments less ground_truth_moments, z = J(theta)^T (b - indicator), in one pass through
  // the model instead of two (the gradient of F through a nonlinear model, whose passes cost as
  // much on the indicator as on the beliefs). Needs labels.
  void moments_less_truth(std::span<double> z) const;
  // The potentials of the ground-truth labelling less their loss, summed over the regions this
  // rank owns: sum of f_i(theta) + offset_i over the labelled positions (linear: theta . d plus
  // the offset's part), the term F subtracts from the smax terms (design.md §2).
  double ground_truth_score() const;
  // Replaces d (this rank's part, in the model's parameters) in ground_truth_moments,
  // moments_less_truth and ground_truth_score with given moments: a soft completion of the
  // labels, such as the latent learner's clamped beliefs. Linear models only, and no selection
  // (select_examples). Empty: the labels' own d again.
  void set_truth_moments(std::vector<double> d);
  // For a problem scored at many theta (Bethe-RDA's psi fit, a validation set): a linear model's
  // d, the same at every theta, computed once and set (set_truth_moments), where each score
  // would otherwise build the ground-truth indicator over every table entry (715 MB on the
  // citations' dev set). Nothing without labels or with a nonlinear model.
  void keep_truth_moments();
  // Its offset part alone: sum of offset_i over the labelled states (0 without an offset).
  double ground_truth_offset() const;
  // 1 at each labelled position of the regions this rank owns, 0 elsewhere, in the potential
  // layout (what a learner that fits each region's potentials to the truth reads).
  std::span<const double> ground_truth_indicator() const { return engine_.truth_weight(); }

  // The beliefs of the last evaluation in the layout [states | table entries], except the tables
  // of the factors that the general kernels keep folded (MessagePassing::
  // factors_with_folded_beliefs), which are not written.
  std::span<const double> beliefs() const { return belief_; }
  // The messages in FactorGraph's arena layout (what checkpoints store), converted from and to
  // the form the kernels keep them in.
  int64_t num_message_entries() const override { return graph_.num_message_entries(); }
  std::vector<double> messages() const override;
  void save_messages(std::vector<double>& arena) const;  // reuses arena's memory
  void set_messages(std::span<const double> arena) override;
  // A copy of the messages in the kernels' own form, and the return to it (the trainer's step
  // search runs sweeps at each trial theta from the same messages). ForASweep: the caller sweeps
  // after each return, and the examples one sweep along their trees makes exact
  // (sweep_along_trees) reach the same fixed point from any messages, so theirs are not copied.
  void keep_messages(MessagesKept what = MessagesKept::All);
  void restore_messages();
  // Message blocks (lambda_{v->a}) updated by one sweep: those of this rank's own variables,
  // twice for the variables of examples swept along their trees.
  int64_t messages_per_sweep() const { return messages_per_sweep_; }
  // On a shard of a split example: its exchanges with the other shards; null otherwise.
  const HaloExchange* halo() const { return halo_.get(); }

 private:
  // keep_messages(ForASweep) on the general kernels, where some example is swept along its trees.
  void keep_resweep_ranges();
  // Runs work(chunk, phase, workspace) for every chunk of the plan, phases of a bundle in order.
  // A shard's exchanges run on the calling thread: on a plan whose phases start with boundary
  // chunks (WorkPlan::phase_interior), between_parts(phase) after them, and after_phase(phase)
  // when the phase is done.
  template <class Work, class BetweenParts, class AfterPhase>
  void run(const WorkPlan& plan, Work&& work, BetweenParts&& between_parts,
           AfterPhase&& after_phase);
  template <class Work>
  void run(const WorkPlan& plan, Work&& work) {
    run(
        plan, std::forward<Work>(work), [](int64_t) {}, [](int64_t) {});
  }
  // One pass of the sweep plan: update(chunk, its variables, workspace) for each chunk, class by
  // class, a shard exchanging its boundary messages after each class.
  template <class Update>
  void pass_over_variables(Update&& update);
  // The sum of chunk_value_ over the plan's chunks whose terms this rank counts.
  double sum_of_chunks(const WorkPlan& plan) const;
  // [chunks of the evaluation plan] 0 for the chunks of a shard's copies of cut factors, whose
  // terms their owners count (their beliefs are still checked here).
  std::vector<uint8_t> counted_chunks() const;
  // A shard's halo beliefs: kept aside (halo_belief_) and zeroed in `belief`, where the moments
  // and loss sums would count them, or written back for the checks that read them.
  void put_halo_beliefs_aside(double* belief);
  // The plans that sweeps and evaluations run: the whole rank's, or select_examples'.
  const WorkPlan& active_sweep_plan() const {
    return selected_.empty() ? sweep_plan_ : selected_sweep_plan_;
  }
  const WorkPlan& active_evaluation_plan() const {
    return selected_.empty() ? evaluation_plan_ : selected_evaluation_plan_;
  }
  // What the potentials start from: the loss, or with an offset their sum (offset_base_).
  std::span<const double> potential_base() const {
    return offset_base_.empty() ? std::span<const double>(loss_) : offset_base_;
  }
  void restore_halo_beliefs(double* belief) const;
  // Whether a phase of the evaluation plan holds factor chunks (else variable chunks).
  bool factors_in(int64_t phase) const;
  // Whether every potential, message and belief of the last evaluation is finite on this rank;
  // explain_non_finite says which one is not and why.
  bool all_values_finite() const;
  std::string explain_non_finite() const;

  const Dataset& data_;
  ProblemSettings settings_;
  double temperature_;
  InferenceEngine engine_;
  // engine_'s parts, under the names the loops use.
  const FactorGraph& graph_;
  const CountingNumbers& counting_;
  MessagePassing& general_;
  std::unique_ptr<Kernels> binary_pairwise_;  // null when they do not apply
  Kernels* kernels_;                          // the ones that run
  Colouring colouring_;  // the sweep's order of the variables, example by example
  WorkPlan sweep_plan_;
  WorkPlan evaluation_plan_;
  std::vector<uint8_t> chunk_counted_;  // counted_chunks()
  int64_t messages_per_sweep_ = 0;
  bool threads_inside_examples_ = false;
  std::unique_ptr<HaloExchange> halo_;  // on a shard of a split example
  // c_v = 0 on some rank: agreed by resolve_kinks, again after each set_temperature.
  std::optional<bool> kinks_on_some_rank_;
  // The shared-table factors whose potentials set_theta need not write (linear models on the
  // general kernels; MessagePassing::factors_without_own_table), else empty.
  std::span<const uint8_t> unwritten_factors_;
  std::vector<double> loss_;         // [states], empty without loss augmentation
  std::vector<double> offset_base_;  // [states] loss + offset; empty: no offset
  double largest_base_;              // max |potential_base()|
  std::vector<int64_t> selected_;    // select_examples'; empty: all
  WorkPlan selected_sweep_plan_;
  WorkPlan selected_evaluation_plan_;
  std::vector<uint8_t> example_selected_;  // [examples] select_examples' scratch, all 0
  std::vector<double> truth_offset_;       // [examples] ground_truth_offset()'s parts
  std::vector<double> truth_moments_;      // set_truth_moments'; empty: the labels
  MessageState lambda_;                    // message state of the kernels
  MessageState kept_lambda_;               // keep_messages' copy (empty until then)
  // keep_messages(ForASweep) on the general kernels: the arena ranges of the examples not swept
  // along their trees (computed at the first call), and their messages, one range after another.
  std::vector<std::pair<int64_t, int64_t>> resweep_ranges_;
  bool resweep_ranges_found_ = false;
  std::vector<double> kept_ranges_;
  bool kept_ranges_only_ = false;    // the last keep_messages copied kept_ranges_ alone
  bool messages_are_kept_ = false;   // lambda_ equals kept_lambda_
  bool imported_finite_ = true;      // set_messages got only finite messages
  ZeroedArray<double> belief_;       // [states + table entries]
  std::vector<double> halo_belief_;  // a shard's halo beliefs, put aside
  mutable std::vector<double> belief_less_truth_;  // moments_less_truth's weights
  std::vector<double> consistent_belief_;          // consistent_beliefs' (empty until then)
  std::vector<double> chunk_value_;                // per chunk of the plan that ran last
  std::vector<BeliefTerms> chunk_terms_;           // per chunk of the evaluation plan
  std::vector<uint8_t> chunk_beliefs_finite_;      // per chunk of the evaluation plan
  std::vector<Workspace> workspaces_;              // one per OpenMP thread
};

}  // namespace pdsp
