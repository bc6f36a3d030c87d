#pragma once
// A CRF whose marginals and log-partition function come from approximate inference run to
// convergence at fixed parameters: loopy belief propagation (ExampleLoopyBp) or naive mean
// field.
// It serves the likelihood baselines and their predictions; one rank's examples.
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/mean_field.hpp"
#include "pdsp/learning/example_loopy_bp.hpp"
#include "pdsp/learning/inference_engine.hpp"

namespace pdsp {

enum class ApproximateInference { LoopyBp, MeanField };

inline constexpr const char* kApproximateInferenceNames = "lbp, mean-field";
ApproximateInference parse_inference(const std::string& text);  // "lbp" | "mean-field"
std::string inference_name(ApproximateInference inference);

// What inference over every example gave: the sum of the approximate log Z, and how many
// examples did not converge (no message or belief moved by less than the tolerance within the
// sweeps allowed, damped sweeps included).
struct InferenceSummary {
  double log_z = 0;
  int64_t unconverged = 0;
  int64_t sweeps = 0;  // sweeps over all examples, damped ones included
};

// What one start of ApproximateCrf::keep_best_start may use: the fixed points earlier starts
// found (each the example's state range), which a state may settle onto (set_settle_distance),
// and whether loopy BP may go on with damped sweeps.
struct StartRules {
  std::span<const std::vector<double>> found;
  bool may_damp = true;
};

class ApproximateCrf {
 public:
  ApproximateCrf(const Dataset& data, ApproximateInference inference, int max_sweeps, double tol);

  const Dataset& data() const { return data_; }
  // Uniform mean-field beliefs and zero messages: where inference starts.
  void reset();
  // Warm starts: accept() keeps the current messages (mean field: beliefs) of every example as
  // the accepted state, restore() goes back to it, so that every evaluation of a line search
  // starts where the last accepted iterate's inference ended.
  void accept();
  void restore();
  // The current state (messages or beliefs) of every example, and a return to such a copy.
  std::vector<double> state_snapshot() const { return state(); }
  void roll_back(const std::vector<double>& snapshot);
  void set_theta(std::span<const double> theta);
  void set_example_theta(int64_t n, std::span<const double> theta);
  // Inference on example n from its current state; returns its approximate log Z and leaves
  // its beliefs in beliefs(). Loopy BP that has not converged after `max_sweeps` continues
  // with as many damped sweeps (each message half its old value, half its update), which
  // keep the fixed points and stop many oscillations.
  double infer(int64_t n);
  bool converged(int64_t n) const { return converged_[n] != 0; }
  // Inference on every example (OpenMP over examples). Collective over the ranks that share the
  // data file: when a potential, message or belief of any rank is not finite, every rank throws
  // the lowest such rank's explanation. Counts are this rank's.
  InferenceSummary infer_all();
  // As infer_all, but each example keeps the best of several starts: its current state (zero
  // messages, uniform beliefs on a fresh object; in training the accepted iterate's), one start
  // per state s, pulled towards s (a bias on every variable's state s for the first sweeps,
  // then the true potentials), and one pulled towards each variable's own best state (the
  // largest of its potentials: where the observations point): the fixed point with the largest
  // approximate log Z (the lowest Bethe free energy found, or the tightest mean-field bound), a
  // converged one before any other. Loopy BP and mean field have many fixed points once
  // couplings are strong; the one a single start falls into can hold a log Z far below the
  // truth's score (a negative NLL), and the one near the pattern the observations show is
  // reached only from near it. No start reads the labels, so that training evaluates the
  // fixed points prediction finds. `chosen_start[n]` says which won: 0 the current state, 1 + s
  // pulled towards s, 1 + states the observations' best states, 2 + states the annealed start,
  // 3 + states zero messages (uniform beliefs) when the current state is a warm one. Loopy BP
  // runs a start's damped sweeps only while no earlier start of the example has converged: a
  // start that needs them then could win only by converging, and they were most of the cost.
  //
  // With `anneal`, one more start follows a fixed point from weak potentials to the true ones:
  // inference to convergence at theta scaled by 0.1, 0.2, ..., 0.9, each from the last, then
  // at theta. At small scales inference has one fixed point, and the one it follows is the
  // branch the observations select as couplings grow, not a state frozen by a pull. It is
  // prediction's substitute for training's warm start (a test example has no path of accepted
  // iterates to follow), and costs about as much inference as the other starts together.
  //
  // With CurrentState::Warm (training: the accepted iterate's state), zero messages are one
  // more start, so that the others are exactly prediction's, and cold_log_z() says what they
  // found without the warm one.
  //
  // With StartSet::PulledTowardsStates only the starts pulled towards each state s run besides
  // the current state (no start towards the own best states, no zero messages, no annealing):
  // the cheap ones, which converge in a few sweeps, for the likelihood baselines' line-search
  // trials (likelihood.hpp). cold_log_z() is then the best of those starts.
  enum class CurrentState { Cold, Warm };
  enum class StartSet { All, PulledTowardsStates };
  InferenceSummary infer_all_best_start(std::vector<int>& chosen_start, bool anneal = false,
                                        CurrentState current = CurrentState::Cold,
                                        StartSet set = StartSet::All);
  // After infer_all_best_start without annealing: the examples where `wanted` is set also try
  // the annealed start, kept by the same rule (`chosen_start` and cold_log_z() are updated).
  // Training calls it where prediction's starts left an approximate NLL below zero, a sure sign
  // that they missed the fixed points that matter (for mean field the labelling itself is a
  // higher bound). Collective like infer_all: every rank calls it, whether it has such examples
  // or not.
  InferenceSummary anneal_where(std::span<const char> wanted, std::vector<int>& chosen_start);
  // A start whose sweep moves no message (mean field: belief) by more than `distance`, and whose
  // state is that close to a converged fixed point that an earlier one of prediction's starts of
  // the example found (largest difference of an entry), is heading there: it is moved onto that
  // point and counts as having converged to it, which it cannot beat (a start must find a
  // clearly larger log Z to win). A fixed point attracts the states near it, and the last digits
  // of such a start's convergence took hundreds of sweeps near strong couplings (mean field on
  // the denoising sets of issue 42). Prediction applies the same rule. 0: every start runs to
  // its own convergence.
  static constexpr double kSettleDistance = 1e-4;
  void set_settle_distance(double distance) { settle_distance_ = distance; }
  // The `chosen_start` of the start pulled towards the variables' own best states, of the
  // annealed one, and of zero messages as a start besides a warm current state.
  int own_best_start() const;
  int annealed_start() const { return own_best_start() + 1; }
  int zero_start() const { return own_best_start() + 2; }
  // Per example, from the last infer_all_best_start and anneal_where: the approximate log Z of
  // the fixed point that prediction's starts alone (all but a warm current state) would keep,
  // by the same rule. The log Z the example kept is never below it, unless that one converged
  // and this did not.
  std::span<const double> cold_log_z() const { return cold_log_z_; }
  // The approximate log Z of each example from the last inference.
  std::span<const double> example_log_z() const { return per_example_; }
  // The score of the ground truth of each example, sum of its potentials at the labels.
  std::vector<double> truth_scores() const;
  // 1 at the labels' positions in the potential layout (InferenceEngine::truth_weight).
  std::span<const double> truth_weight() const { return engine_.truth_weight(); }
  std::span<const double> beliefs() const { return belief_; }
  // z = the moments of the beliefs through the model at the current theta.
  void moments(std::span<double> z) const;
  // z += the features of example n weighted by `weight` (a vector over the potential layout).
  void add_example_moments(int64_t n, std::span<const double> weight, std::span<double> z) const;
  void ground_truth_moments(std::span<double> d) const;

 private:
  // The totals of the examples' last inference.
  InferenceSummary summary() const;
  // Inference on example n from its current state.
  double infer(int64_t n, Workspace& w, StartRules rules = {});
  // Whether example n's state is within the settle distance of one of `found`; if so it becomes
  // that one.
  bool near_found(int64_t n, std::span<const std::vector<double>> found);
  // `state` kOwnBest: each variable's state of largest potential.
  static constexpr int32_t kOwnBest = -1;
  void pull_towards(int64_t n, int32_t state, double amount);
  // Example n's state back to zero messages (uniform beliefs).
  void start_from_zero(int64_t n);
  // Inference on example n from zero messages (uniform beliefs) pulled towards `state`.
  double infer_pulled(int64_t n, int32_t state, Workspace& w, StartRules rules);
  // Inference on example n from zero messages (uniform beliefs) along the annealing schedule.
  double infer_annealed(int64_t n, Workspace& w, StartRules rules);
  // Inference on example n from start `start` (numbered as chosen_start, not 0).
  double infer_from_start(int64_t n, int start, Workspace& w, StartRules rules);
  // Example n's current state (start `incumbent`, one of prediction's when `incumbent_is_cold`)
  // against `starts`: keeps the best fixed point, leaves its beliefs and log Z in place, updates
  // the example's best cold fixed point, adds the sweeps and returns the start kept.
  int keep_best_start(int64_t n, int incumbent, bool incumbent_is_cold, std::span<const int> starts,
                      Workspace& w, int64_t& sweeps);
  // The ranges of potential_ that hold example n's unaries and its factor tables.
  std::array<std::pair<int64_t, int64_t>, 2> potential_ranges(int64_t n) const;
  // The example's range of the state it keeps: messages (BP) or beliefs (mean field).
  std::pair<int64_t, int64_t> state_range(int64_t n) const;
  std::vector<double>& state() {
    return inference_ == ApproximateInference::LoopyBp ? loopy_.messages() : belief_;
  }
  const std::vector<double>& state() const {
    return inference_ == ApproximateInference::LoopyBp ? loopy_.messages() : belief_;
  }
  void require_finite() const;
  std::string explain_non_finite() const;

  const Dataset& data_;
  ApproximateInference inference_;
  int max_sweeps_;
  double tol_;
  InferenceEngine engine_;
  // engine_'s parts, under the names the inference uses (the starts change the potentials).
  const FactorGraph& graph_;
  ExampleChunks chunks_;  // each example's colour classes, which both inferences sweep by
  ExampleLoopyBp loopy_;
  MeanField mean_field_;
  std::span<double> potential_;
  std::vector<double> belief_, per_example_;
  std::vector<double> cold_log_z_;    // see cold_log_z()
  std::vector<char> cold_converged_;  // whether that fixed point converged
  std::vector<double> accepted_;      // the accepted state (messages or beliefs), see accept()
  std::vector<char> converged_;       // per example, from its last inference
  double settle_distance_ = kSettleDistance;
  std::vector<int> sweeps_;  // per example, sweeps of its last inference
  std::vector<Workspace> workspaces_;
  std::vector<std::vector<double>> scratch_;  // per thread: an example's state before a sweep
};

}  // namespace pdsp
