// --learner latent: partly labelled data (labels -1) by CCCP, as Schwing, Hazan, Pollefeys and
// Urtasun (ICML 2012) learn with latent variables (docs/design.md §9.3). The objective
//
//   F(theta) = sum_n smax_eps[theta . phi(y) + loss(y)] - sum_n smax_eps'[theta . phi(y) : y
//              agrees with the observed labels] + (C/p)|theta|_p^p
//
// is a difference of two convex functions when both smax use convex counting numbers, each at
// its own temperature: eps for the first, eps' = --completion-epsilon (at most eps; default
// eps / 10) for the second. A CCCP step linearises the second at theta_t, whose gradient is
// d_t, the moments of the beliefs with the observed labels clamped (clamping.hpp): what is left
// is the primal-dual learner's problem with d_t in place of the labels' moments, solved by an
// inner run of it. F(theta_{t+1}) <= F(theta_t) when the inner run lowers its objective.
//
// Why a colder completion by default: with counting numbers that over-smooth (the uniform ones
// on a grid) the completed labels are less certain than the data, their pairwise moments agree
// less than labels do, and the model learns weaker couplings than full labels would give it.
// On horses and denoising with 30% and 60% of the pixels unobserved eps / 10 gave a lower test
// error than eps in 7 of 8 settings and the same in the eighth (docs/benchmarks.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/learners/primal_dual/problem_learner.hpp"
#include "pdsp/learning/clamping.hpp"
#include "pdsp/learning/sweep_to_tolerance.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {
namespace {

// The run's observer as an inner run sees it: stop requests pass through; records and
// checkpoints do not (the log and the checkpoints know CCCP steps).
class InnerObserver final : public TrainingObserver {
 public:
  explicit InnerObserver(TrainingObserver& outer) : outer_(outer) {}
  void on_iteration(const IterationRecord&) override {}
  bool stop_requested() const override { return outer_.stop_requested(); }

 private:
  TrainingObserver& outer_;
};

class LatentLearner final : public ProblemLearner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    run_collectively(comm, [&] {
      if (!slice.has_labels())
        throw InputError(slice.source() +
                         ": /vars/label: --learner latent needs labels (-1 where unobserved)");
    });
    // With no label observed, every completion is the model's own guess and D is NaN.
    double own = 0;
    for (int64_t v = 0; v < slice.owned_vars(); ++v) own += slice.label[v] >= 0 ? 1 : 0;
    const double observed = comm.allreduce_sum(own);
    run_collectively(comm, [&] {
      if (observed == 0)
        throw InputError(slice.source() +
                         ": /vars/label: every label is -1 (unobserved); --learner latent needs "
                         "some observed");
    });
    ProblemLearner::set_up(slice, config, comm);  // resolves config.counting
    ProblemSettings settings = training_problem_settings(config);
    settings.loss_augmented = false;
    settings.epsilon = config.resolved_completion_epsilon();
    run_collectively(comm, [&] {
      clamped_ = std::make_unique<LocalProblem>(slice, settings,
                                                make_potential_model(slice, config.model_choice()));
    });
    // Negative counting numbers (Bethe's on loops) make each smax non-convex in the messages,
    // and F no longer a difference of convex functions: CCCP's decrease is not guaranteed.
    double saddle[1] = {problem_->is_saddle_problem() ? 1.0 : 0.0};
    comm.allreduce({}, std::span<double>(saddle));
    saddle_ = saddle[0] > 0;
  }

  std::string set_up_summary() const override {
    std::string summary = ProblemLearner::set_up_summary();
    if (config_->resolved_completion_epsilon() != config_->epsilon)
      summary += "; completion at epsilon " + field_text(config_->resolved_completion_epsilon());
    return summary +
           (saddle_ ? "; CCCP with negative counting numbers: F need not fall at every step" : "");
  }

  TrainResult run(TrainingObserver& observer, TrainingState start) override {
    if (start.stop.is_final()) return finished_run(start);
    TrainResult result;
    result.state = std::move(start);
    TrainingState& state = result.state;
    if (state.theta.empty()) state.theta = problem_->model().initial_theta();
    result.stop = stop_iteration_limit();
    const auto started = Clock::now();
    const double trained_before = state.seconds_trained;
    Evaluation here = evaluate(state.theta);
    result.objective = here.objective;
    for (int step = state.iterations_done + 1; step <= config_->max_iters; ++step) {
      const auto step_start = Clock::now();
      problem_->set_truth_moments(here.moments);
      TrainConfig inner_config = *config_;
      inner_config.max_iters = config_->inner_iters;
      if (config_->max_seconds > 0)
        inner_config.max_seconds =
            std::max(1e-9, config_->max_seconds - trained_before - seconds_since(started));
      TrainingState inner_start;
      inner_start.theta = state.theta;
      problem_->keep_messages();
      InnerObserver inner(observer);
      const TrainResult inner_result = train(*problem_, inner_config, *comm_, inner, inner_start);
      if (inner_result.stop.kind == StopKind::Signal) {
        // The step is not done: the state stays that of its start, which a checkpoint keeps.
        problem_->restore_messages();
        result.stop = stop_signal();
        state.seconds_trained = trained_before + seconds_since(started);
        IterationRecord unchanged;
        unchanged.iteration = state.iterations_done;
        observer.after_iteration(state, unchanged, result.stop);
        break;
      }
      const Evaluation next = evaluate(inner_result.state.theta);
      IterationRecord record = step_record(step, here, next, inner_result);
      record.seconds = seconds_since(step_start);
      record.elapsed = trained_before + seconds_since(started);
      observer.on_iteration(record);
      StopReason stop;
      const double decrease = here.objective - next.objective;
      if (decrease < -1e-12 * std::max(1.0, std::abs(here.objective))) {
        // The model stays theta_t, the better of the two.
        rises_ += 1;
        char text[256];
        std::snprintf(
            text, sizeof text,
            "the CCCP objective rose by %.3g at step %d (%s); the model is the theta before it",
            -decrease, step,
            saddle_ ? "negative counting numbers: no guaranteed decrease"
                    : "the inner run or inference stopped short: raise --inner-iters "
                      "or --inference-sweeps");
        stop = stop_no_progress(text);
      } else {
        state.theta = inner_result.state.theta;
        state.iterations_done = step;
        state.previous_objective = next.objective;
        result.objective = next.objective;
        here = next;
        if (decrease <= config_->tol * std::max(1.0, std::abs(next.objective)))
          stop = stop_small_change("the CCCP objective decreased by less than tol");
        if (!stop.stops())
          stop = limit_or_signal(*comm_, observer.stop_requested(), record.elapsed,
                                 config_->max_seconds, step, config_->max_iters);
      }
      steps_ = step;
      const StopReason acted = finish_iteration(observer, state, record, stop);
      if (acted.stops()) {
        result.stop = acted;
        break;
      }
    }
    problem_->set_truth_moments({});
    return result;
  }

  Summary run_summary(Communicator&) override {
    char line[160];
    std::snprintf(line, sizeof line, "CCCP: %d step(s); the objective %s", steps_,
                  rises_ == 0 ? "decreased at every step" : "rose at the last step");
    return {line, {{"cccp_steps", int64_t{steps_}}, {"cccp_rises", int64_t{rises_}}}};
  }

 private:
  // F at theta (over all ranks) and this rank's part of d: the moments of the clamped beliefs,
  // the gradient of the clamped smax at theta.
  struct Evaluation {
    double objective = 0;
    std::vector<double> moments;
  };

  Evaluation evaluate(std::span<const double> theta) {
    Evaluation e;
    // The completion: the clamped problem from zero messages, so that a resumed run repeats it
    // bit for bit without a checkpoint of its messages.
    clamped_->set_messages(
        std::vector<double>(static_cast<size_t>(clamped_->num_message_entries()), 0.0));
    clamped_->set_potential_offset(clamp_offset(*clamped_, clamped_->data().label, theta));
    clamped_->set_theta(theta);
    double change = 0;
    sweep_to_tolerance(*clamped_, config_->inference_sweeps, config_->inference_tol, change,
                       [](int, double) {});
    clamped_->evaluate();
    e.moments.assign(static_cast<size_t>(clamped_->num_params()), 0.0);
    clamped_->model_moments(e.moments);
    const double clamped_smax = clamped_->objective();
    // The loss-augmented smax at converged messages, which then go back to where the inner run
    // left them.
    problem_->keep_messages();
    problem_->set_theta(theta);
    sweep_to_tolerance(*problem_, config_->inference_sweeps, config_->inference_tol, change,
                       [](int, double) {});
    const double augmented_smax = problem_->objective();
    problem_->restore_messages();
    e.objective = comm_->allreduce_sum(augmented_smax - clamped_smax) +
                  Regularizer{config_->C, config_->p}.value(theta);
    return e;
  }

  // A CCCP step's record: F before and after it (no dual: CCCP certifies no gap), and the inner
  // run's iterations.
  IterationRecord step_record(int step, const Evaluation& before, const Evaluation& after,
                              const TrainResult& inner) const {
    IterationRecord record;
    record.iteration = step;
    record.objective = before.objective;
    record.objective_after_step = after.objective;
    record.dual = record.gap = record.grad_norm = record.step = NAN;
    record.temperature = config_->epsilon;
    record.step_trials = inner.state.iterations_done;  // the inner run's iterations
    record.direction = "cccp";
    return record;
  }

  std::unique_ptr<LocalProblem> clamped_;  // not loss-augmented, the observed labels clamped
  bool saddle_ = false;                    // on some rank a counting number is negative at eps > 0
  int steps_ = 0;
  int rises_ = 0;
};

}  // namespace

LearnerEntry latent_learner() {
  LearnerTraits traits;
  traits.epsilon_low = 1e-12;
  traits.epsilon_rule = "works at --epsilon > 0 (the completion's entropy keeps CCCP smooth)";
  traits.checkpoints = true;
  traits.unobserved_labels = true;
  return {"latent",
          "partly labelled data (labels -1): CCCP, each step an inner primal-dual run with the "
          "unobserved labels completed by inference with the observed ones clamped",
          traits, [] { return std::make_unique<LatentLearner>(); }};
}

}  // namespace pdsp
