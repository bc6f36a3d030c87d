#pragma once
// The outer loop behind train() (trainer.hpp), shared by its two files: trainer.cpp (the
// phases of an iteration and the loop) and trainer_stops.cpp (the stopping tests, the
// certificates and the smoothing's temperature). Internal to src/learners/primal_dual.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/learners/primal_dual/kronecker_curvature.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/tree_fits.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

// The outer loop, one method per phase of design.md §5.
class Trainer {
 public:
  Trainer(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
          TrainingObserver& observer, TrainingState start);
  // Once: the result takes the state over (its L-BFGS memory can be most of a rank's memory).
  TrainResult run();

 private:
  void compute_global_terms();
  // z -= d in place: the moments' distance from the ground truth's (the gradient without the
  // regulariser, and the argument of its conjugate in the dual). In place, because a temporary
  // of the model's size would cost its pages every iteration (7.4 million parameters: 59 MB).
  void subtract_d(std::span<double> z) const {
    for (size_t r = 0; r < params_; ++r) z[r] -= d_[r];
  }
  // F from the sum over the ranks of local_objective() (design.md §2).
  double full_objective(double local_sum, std::span<const double> at) const {
    return local_sum - dot(d_, at) - truth_offset_ + regularizer_.value(at);
  }
  // This rank's part of F but for the regulariser: its smax terms, less the ground-truth score
  // when the model is nonlinear (a linear one's is theta . d + truth_offset_, from the reduced d).
  double local_objective() {
    return linear_ ? problem_.objective() : problem_.objective() - problem_.ground_truth_score();
  }
  // Sweeps, beliefs and the one allreduce; fills the gradient and the record's F, D, gap.
  void evaluate(IterationRecord& record);
  // The step of the iteration, on the trees (steps_on_trees) or on theta: along -H g when the
  // L-BFGS memory has pairs or a curvature model starts it (-P^{-1} g), else (or when that
  // fails) along -grad; updates theta, the step and the memory.
  void take_step(IterationRecord& record);
  // The step on theta: returns whether F decreased.
  bool step_theta(IterationRecord& record);
  // The step on the trees (a model with a trees class): one boosting round fitted at this
  // iteration's beliefs, scaled by the step search; a failed search leaves the round at 0.
  bool step_trees(IterationRecord& record);
  // Whether this iteration steps on the trees: every iteration when theta has no free
  // parameter, else every other one, so that each step starts from its own evaluation.
  bool steps_on_trees(const IterationRecord& record) const {
    return tree_fits_ && (record.iteration % 2 == 1 || record.grad_norm == 0);
  }
  // Whether the iteration ends a cycle of steps, after which F has moved along every part of
  // the model: the decrease of F is measured from cycle to cycle.
  bool ends_cycle(const IterationRecord& record) const {
    return !steps_on_trees(record) || record.grad_norm == 0;
  }
  // Sets the potentials of the trial at step eta and returns the theta they were set at.
  using TrialPlacement = std::function<std::span<const double>(double eta)>;
  // Armijo backtracking from `first_step` along a direction whose derivative is `slope`,
  // halving (or, with `interpolate`, by quadratic interpolation), at most --max-step-trials
  // evaluations of F, each after sweeps from the kept messages. Returns true at the first
  // sufficient decrease (record.step: its eta), the trial's potentials left in place.
  bool line_search(IterationRecord& record, double first_step, bool interpolate, double slope,
                   const TrialPlacement& place);
  // The first step of a run's first search along the gradient (state_.step not yet set).
  double first_gradient_step(const IterationRecord& record) const;
  // line_search along theta + eta direction_; an accepted trial becomes theta.
  bool search_theta(IterationRecord& record, double first_step, bool interpolate);
  StopReason convergence(const IterationRecord& record) const;
  // eps > 0 with no negative counting number: replaces D by the dual at this iteration's beliefs
  // made consistent, a bound at any messages, where the gap decides or reports a stop. Its pass
  // costs several gradients (64x64 denoising: 105 ms against 10), so other iterations keep the
  // D of the beliefs as they are, a bound only once the messages have converged.
  void certify_where_it_counts(IterationRecord& record);
  // eps = 0: adds this evaluation's beliefs, made consistent, to the dual bundle and returns the
  // best D_0 (smoothing.hpp).
  double certified_dual();
  // The moments of this evaluation's beliefs made consistent. At eps = 0 they travel with every
  // allreduce, after the sums of reduced_'s scalars; elsewhere certify_where_it_counts needs them
  // rarely and after the step, when direction_ is free: a vector of the model's size less.
  std::span<double> consistent_moments() {
    return smoothing_ ? std::span<double>(reduced_).subspan(params_ + 4, params_)
                      : std::span<double>(direction_);
  }
  // eps = 0: lowers the temperature when smoothing.hpp's rule says so (a stop on a small
  // decrease of F_w then becomes a move to the next temperature); returns the stop reason left.
  StopReason continue_smoothing(const IterationRecord& record, const StopReason& stop);

  LocalProblem& problem_;
  const TrainConfig& config_;
  Communicator& comm_;
  TrainingObserver& observer_;
  TrainingState state_;
  const Regularizer regularizer_;
  const size_t params_;
  const bool smoothing_;  // eps = 0: training runs at a temperature lowered towards 0
  // The potential model is linear: d is fixed, and the dual and its certificates hold. A
  // nonlinear one gets its ground-truth terms at every theta, and F and the gradient only.
  const bool linear_;
  bool saddle_ = false;              // some rank has a negative counting number
  bool dual_bounds_primal_ = false;  // no negative counting number anywhere
  // Every example on every rank is exact (a forest with Bethe numbers, eps > 0): the messages an
  // iteration ends with were swept at its theta, and the next one evaluates them as they are.
  bool swept_messages_carry_over_ = false;
  std::vector<double> d_;    // empirical feature sums at the ground truth (0: nonlinear model)
  double truth_offset_ = 0;  // linear model: the potential offset's ground-truth part, all ranks
  double message_blocks_ = 0;
  const bool lbfgs_;                             // --theta-step lbfgs
  std::optional<KroneckerCurvature> curvature_;  // --lbfgs-curvature other than identity
  std::vector<double> direction_, trial_, reduced_;
  // The gradient: formed in place of the reduced moments (the first params_ entries of
  // reduced_), or in storage of its own when the curvature model reads the moments after it.
  std::span<double> grad_;
  std::vector<double> gradient_storage_;
  std::unique_ptr<TreeFits> tree_fits_;  // when a function class is trees
  double entropy_ = 0;  // eps = 0: D_w - D_0 of the last evaluation (smoothing.hpp)
  // Maxima of the allreduce: [violation, training seconds, stop request, local compute seconds].
  // The clock and the request travel with the gradient so that every rank takes the same
  // decisions.
  double maxima_[4] = {0, 0, 0, 0};
  Clock::time_point started_;
};

}  // namespace pdsp
