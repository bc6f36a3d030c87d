#include "pdsp/learners/domke/alternating_fits.hpp"

#include <cmath>
#include <memory>

#include "pdsp/learning/tree_fits.hpp"
#include "pdsp/optim/lbfgs_minimize.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {
namespace {

class AlternatingFits {
 public:
  AlternatingFits(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer)
      : problem_(problem),
        config_(config),
        comm_(comm),
        observer_(observer),
        regularizer_{config.C, config.p},
        params_(static_cast<size_t>(problem.num_params())),
        kinds_(problem.model().parameter_kinds()),
        theta_(problem.model().initial_theta()),
        gradient_(params_),
        reduced_(params_ + 1) {
    // A linear model's ground-truth moments are the same at every theta: one pass, not two per
    // evaluation of the fits.
    if (problem.model().is_linear()) {
      truth_.resize(params_);
      problem.ground_truth_moments(truth_);
    }
    if (TreeFunctions* trees = problem.model().tree_functions())
      tree_fits_ = std::make_unique<TreeFits>(problem, *trees, comm);
  }

  // From `start`: a checkpoint's theta, trees, iteration count and last F (the messages are
  // the problem's own), or a fresh state.
  TrainResult run(TrainingState start) {
    state_ = std::move(start);
    if (state_.stop.is_final()) return finished_run(state_);
    TrainResult result;
    result.objective = state_.previous_objective;
    if (!state_.theta.empty()) theta_ = state_.theta;
    TreeFunctions* trees = problem_.model().tree_functions();
    if (trees && !state_.trees.empty())  // a damaged checkpoint is refused on every rank alike
      run_collectively(comm_, [&] { trees->load(state_.trees, "the checkpoint"); });
    const auto started = Clock::now();
    result.stop = stop_iteration_limit();
    for (int iteration = state_.iterations_done + 1; iteration <= config_.max_iters; ++iteration) {
      const auto iteration_start = Clock::now();
      IterationRecord record;
      record.iteration = iteration;
      for (const uint8_t kind :
           {PotentialModel::kVariableParameter, PotentialModel::kFactorParameter}) {
        const auto fit_start = Clock::now();
        fit(kind, record);
        record.seconds_gradient += seconds_since(fit_start);
        const auto sweep_start = Clock::now();
        problem_.set_theta(theta_);
        problem_.sweep(config_.fit_sweeps);
        record.seconds_messages += seconds_since(sweep_start);
      }
      // F and its gradient at the new messages: what the next fits start from.
      record.objective = record.objective_after_step = objective_and_gradient(theta_);
      record.grad_norm = std::sqrt(dot(gradient_, gradient_));
      record.dual = record.gap = NAN;  // no dual to certify the fits
      record.temperature = problem_.temperature();
      record.seconds = seconds_since(iteration_start);
      record.elapsed = state_.seconds_trained + seconds_since(started);
      observer_.on_iteration(record);
      StopReason stop = stop_after(record, state_.previous_objective);
      state_.theta = theta_;
      state_.iterations_done = iteration;
      state_.previous_objective = record.objective;
      if (trees) state_.trees = trees->stored();
      result.objective = record.objective;
      stop = finish_iteration(observer_, state_, record, stop);
      if (stop.stops()) {
        result.stop = stop;
        break;
      }
    }
    result.state = state_;
    result.state.theta = theta_;
    result.state.seconds_trained += seconds_since(started);
    return result;
  }

 private:
  // F at theta with the current messages (the sum of every rank's smax terms less the ground
  // truth's score, plus the regulariser) and its gradient in gradient_. Collective.
  double objective_and_gradient(std::span<const double> theta) {
    problem_.set_theta(theta);
    const LocalEvaluation local = problem_.evaluate();
    const std::span<double> moments = std::span<double>(reduced_).first(params_);
    const bool linear = !truth_.empty();
    if (linear) {
      problem_.model_moments(moments);
      for (size_t r = 0; r < params_; ++r) moments[r] -= truth_[r];
    } else {
      problem_.moments_less_truth(moments);
    }
    reduced_[params_] =
        local.objective - (linear ? dot(truth_, theta) + problem_.ground_truth_offset()
                                  : problem_.ground_truth_score());
    comm_.allreduce(reduced_, {});
    std::copy(moments.begin(), moments.end(), gradient_.begin());
    regularizer_.add_gradient(theta, gradient_);
    return reduced_[params_] + regularizer_.value(theta);
  }

  // Fits the potentials of `kind` at the current messages: boosting rounds for its trees, then
  // F minimised over the parameters that they read.
  void fit(uint8_t kind, IterationRecord& record) {
    if (tree_fits_) tree_fits_->boost(problem_, theta_, kind, config_.tree_rounds, config_.C);
    std::vector<size_t> fitted;
    for (size_t r = 0; r < params_; ++r)
      if (kinds_[r] & kind) fitted.push_back(r);
    if (fitted.empty()) return;
    std::vector<double> x(fitted.size());
    for (size_t i = 0; i < fitted.size(); ++i) x[i] = theta_[fitted[i]];
    std::vector<double> trial = theta_;
    const SmoothObjective f = [&](std::span<const double> at, std::span<double> grad) {
      for (size_t i = 0; i < fitted.size(); ++i) trial[fitted[i]] = at[i];
      const double value = objective_and_gradient(trial);
      for (size_t i = 0; i < fitted.size(); ++i) grad[i] = gradient_[fitted[i]];
      return value;
    };
    MinimizeSettings settings;
    settings.max_iters = config_.fit_iters;
    const MinimizeResult fitted_result = minimize_lbfgs(f, x, settings);
    for (size_t i = 0; i < fitted.size(); ++i) theta_[fitted[i]] = x[i];
    record.step_trials += fitted_result.evaluations;
    if (!std::isfinite(fitted_result.value))
      throw CollectiveError(config_.data + ": the fit diverged at iteration " +
                                std::to_string(record.iteration) +
                                " (F = " + number_text(fitted_result.value) + ")",
                            comm_.is_root());
  }

  // No stop to go on; the same on every rank (F is reduced, the flags too).
  StopReason stop_after(const IterationRecord& record, double previous) const {
    const double scale = std::max(1.0, std::abs(record.objective));
    if (!std::isnan(previous) && std::abs(previous - record.objective) < config_.tol * scale)
      return stop_small_change(
          "relative decrease of F below tol (not certified: the alternating fits have no gap "
          "test; |grad F| at the messages is " +
          number_text(record.grad_norm) + ")");
    return limit_or_signal(comm_, observer_.stop_requested(), record.elapsed, config_.max_seconds,
                           record.iteration, config_.max_iters);
  }

  LocalProblem& problem_;
  const TrainConfig& config_;
  Communicator& comm_;
  TrainingObserver& observer_;
  const Regularizer regularizer_;
  const size_t params_;
  const std::vector<uint8_t> kinds_;
  std::vector<double> theta_, gradient_, reduced_;
  std::vector<double> truth_;            // a linear model's ground-truth moments (empty: nonlinear)
  std::unique_ptr<TreeFits> tree_fits_;  // when a class is trees
  TrainingState state_;                  // what a checkpoint after the last iteration holds
};

}  // namespace

TrainResult train_alternating_fits(LocalProblem& problem, const TrainConfig& config,
                                   Communicator& comm, TrainingObserver& observer,
                                   TrainingState start) {
  return AlternatingFits(problem, config, comm, observer).run(std::move(start));
}

}  // namespace pdsp
