#include "pdsp/learners/likelihood/crf_baselines.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "pdsp/learners/likelihood/likelihood.hpp"
#include "pdsp/optim/lbfgs_memory.hpp"
#include "pdsp/optim/wolfe_line_search.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

double norm(std::span<const double> v) {
  return std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0));
}

IterationRecord record_of(int iteration, double before, const Evaluation& after,
                          std::span<const double> grad, double step, Clock::time_point started,
                          Clock::time_point iteration_start) {
  IterationRecord r;
  r.iteration = iteration;
  r.objective = before;
  r.objective_after_step = after.value;
  r.dual = r.gap = NAN;
  r.grad_norm = norm(grad);
  r.step = step;
  r.negative_nll_examples = after.negative;
  r.lowest_nll = after.lowest_nll;
  r.seconds = seconds_since(iteration_start);
  r.elapsed = seconds_since(started);
  return r;
}

// An epoch whose end point has unconverged inference or a negative NLL is repeated from its
// start with half the step, at most this many times; if the last try is not valid either, the
// epoch is undone and training stops at its start, the last point whose evaluation held.
constexpr int kSgdHalvings = 5;

StopReason invalid_start(const Evaluation& e) {
  return stop_no_progress("inference did not converge at theta = 0 in " +
                          std::to_string(e.unconverged) + " examples");
}

StopReason sgd_stop_after_halvings(int epoch, const Evaluation& e) {
  return stop_no_progress(
      "epoch " + std::to_string(epoch) + " ended at a point that is not valid after " +
      std::to_string(kSgdHalvings) + " halvings of its step (" + std::to_string(e.unconverged) +
      " examples unconverged, " + std::to_string(e.negative) +
      " with a negative NLL); the model is the last valid point, where the epoch started");
}

TrainResult train_sgd(ApproximateCrf& crf, const BaselineConfig& config, Communicator& comm,
                      TrainingObserver& observer) {
  Likelihood likelihood(crf, config.C, comm);
  const Dataset& data = crf.data();
  const size_t params = static_cast<size_t>(data.num_params);
  const double variables_per_example =
      likelihood.variables() / static_cast<double>(data.file_examples);

  TrainResult result;
  result.state.theta.assign(params, 0.0);
  std::vector<double>& theta = result.state.theta;
  std::vector<double> grad(params);
  const auto started = Clock::now();
  const Evaluation first = likelihood.evaluate(theta, grad);
  double previous = result.objective = first.value;
  result.stop = first.valid ? stop_iteration_limit() : invalid_start(first);
  for (int epoch = 1; first.valid && epoch <= config.max_iters; ++epoch) {
    const auto epoch_start = Clock::now();
    double step = config.step / variables_per_example / epoch;
    // SGD has no line search to reject a point, so an epoch that ends where the evaluation is
    // not to be trusted is taken again from the same theta and messages with a shorter step.
    const std::vector<double> theta_before = theta;
    const std::vector<double> state_before = crf.state_snapshot();
    int halvings = 0;
    Evaluation e;
    for (;; ++halvings) {
      for (int64_t n = 0; n < data.file_examples; ++n) {
        likelihood.example_gradient(n, theta, grad);
        for (size_t r = 0; r < params; ++r) theta[r] -= step * grad[r];
      }
      // The evaluation starts where the epoch's example updates left the messages.
      crf.accept();
      e = likelihood.evaluate(theta, grad);
      if (e.valid) break;
      theta = theta_before;
      crf.roll_back(state_before);
      if (halvings == kSgdHalvings) break;
      step /= 2;
    }
    IterationRecord record = record_of(epoch, previous, e, grad, step, started, epoch_start);
    record.unconverged_examples = e.unconverged;
    record.step_trials = halvings;
    observer.on_iteration(record);
    if (!e.valid) {
      // A model no likelihood can describe is worse than one epoch fewer, and the next epoch's
      // step would be longer than every step this one tried.
      result.stop = sgd_stop_after_halvings(epoch, e);
      break;
    }
    result.state.iterations_done = epoch;
    result.objective = e.value;
    StopReason stop;
    if (std::abs(previous - e.value) <= config.tol * std::max(1.0, std::abs(e.value)))
      stop = stop_small_change(
          "relative change of the likelihood below tol (not certified: SGD "
          "has no optimality test)");
    stop = finish_iteration(observer, result.state, record, stop);
    if (stop.stops()) {
      result.stop = stop;
      break;
    }
    previous = e.value;
  }
  crf.accept();
  return result;
}

// L-BFGS on L / V: pdsp's curvature memory (pairs without positive curvature are dropped), a
// strong Wolfe line search that rejects evaluations whose inference did not converge, every
// evaluation warm-started from the accepted iterate's messages, the trials with the cheap starts
// and the accepted points with every start (trial_step_holds), and only accepted points kept.
class LbfgsBaseline {
 public:
  LbfgsBaseline(ApproximateCrf& crf, const BaselineConfig& config, Communicator& comm,
                TrainingObserver& observer)
      : crf_(crf),
        config_(config),
        observer_(observer),
        likelihood_(crf, config.C, comm),
        params_(static_cast<size_t>(crf.data().num_params)),
        theta_(params_, 0.0),
        grad_(params_),
        trial_theta_(params_),
        trial_grad_(params_) {
    memory_.reserve(params_, kMemory);
  }

  TrainResult run() {
    const auto started = Clock::now();
    TrainResult result;
    crf_.reset();
    crf_.accept();
    current_ = likelihood_.evaluate(theta_, grad_);
    result.stop = stop_iteration_limit();
    if (!current_.valid) {
      result.stop = invalid_start(current_);
    } else {
      crf_.accept();
      for (int k = 1; k <= config_.max_iters; ++k) {
        const auto iteration_start = Clock::now();
        result.state.iterations_done = k;
        const StopReason stop = iterate(k, started, iteration_start, result.state);
        if (stop.stops()) {
          result.stop = stop;
          break;
        }
      }
    }
    result.state.theta = theta_;
    result.objective = current_.value;
    return result;
  }

 private:
  static constexpr int kMemory = 10;
  static constexpr double kStepGrowth = 2.0;
  static constexpr double kBracketTol = 0.01;
  static constexpr double kNegligibleGain = 0.1;

  // One iteration: a direction, the search, the accepted point, then the observer's turn with
  // `state` at that point. Returns why training stops after it (no stop to go on).
  StopReason iterate(int k, Clock::time_point started, Clock::time_point iteration_start,
                     TrainingState& state) {
    const StopReason stop = search_and_step(k, started, iteration_start);
    state.theta = theta_;
    return finish_iteration(observer_, state, last_record_, stop);
  }

  StopReason search_and_step(int k, Clock::time_point started, Clock::time_point iteration_start) {
    std::vector<double> direction(params_);
    memory_.direction(grad_, direction);
    std::string kind = memory_.pairs(params_) > 0 ? "lbfgs" : "gradient";
    int trials = 0;
    all_start_searches_ = 0;
    all_start_trials_.clear();  // they were evaluated from the last accepted state
    unconverged_in_search_ = 0;
    WolfeResult search = search_and_confirm(direction, kind, trials);
    if (!search.decreased && kind == "lbfgs") {
      memory_.clear();
      kind = "restart";
      search = search_and_confirm(direction, kind, trials);
    }
    const double before = current_.value;
    const std::vector<double> gradient_before = grad_;
    const double step = search.decreased ? search.best.step : 0.0;
    if (search.decreased) {
      theta_ = trial_theta_;
      grad_ = trial_grad_;
      current_ = trial_;
      crf_.accept();
      std::vector<double> taken(params_);
      for (size_t r = 0; r < params_; ++r) taken[r] = step * direction[r];
      memory_.remember_step(taken, gradient_before);
      step_bound_ = std::max(step_bound_, kStepGrowth * norm(taken));
      memory_.complete_pair(grad_, kMemory);
    }
    IterationRecord record =
        record_of(k, before, current_, gradient_before, step, started, iteration_start);
    record.step_trials = trials;
    record.direction = kind;
    record.lbfgs_pairs = memory_.pairs(params_);
    record.unconverged_examples = unconverged_in_search_;
    record.all_start_searches = all_start_searches_;
    observer_.on_iteration(record);
    last_record_ = record;
    if (!search.decreased)
      return stop_no_progress("stopped: no step along -g decreased L with converged inference (" +
                              std::to_string(search.invalid_trials) + " of " +
                              std::to_string(search.trials) +
                              " trials were not valid: unconverged inference or a negative NLL)");
    if (norm(grad_) <= config_.tol * std::max(1.0, norm(theta_)))
      return stop_converged("converged: gradient norm below tol");
    // Approximate inference solved to a tolerance leaves noise in L: below it no search
    // makes progress, so a decrease that small ends training (it is not an optimality test),
    // unless it came along the L-BFGS direction: its curvature pairs, gathered where a start
    // found another fixed point, can point into such a jump while -g does not, so the memory
    // is dropped and the next iteration searches along -g. Nor does it end training when the
    // annealed start raises the current point's value: see value_was_optimistic.
    if (before - current_.value <= config_.tol * std::max(1.0, std::abs(current_.value))) {
      // The recheck first: it may raise the value whatever the direction was.
      if (value_was_optimistic() || kind == "lbfgs") {
        memory_.clear();
        return no_stop();
      }
      return stop_small_change(
          "relative decrease of L below tol (not certified: the gradient norm is " +
          number_text(norm(grad_)) + ")");
    }
    return no_stop();
  }

  // A stalled search may sit at a point whose value is optimistic: the warm start followed a
  // branch of fixed points whose log Z lies below the one the annealed start finds there (as
  // prediction would), and every trial, whose inference leaves that branch, looks worse.
  // Re-evaluates the current point with the annealed start on every example; when that raises
  // L by more than tol, training goes on from the raised value and its fixed points (true),
  // else the point stays as it was (false).
  bool value_was_optimistic() {
    std::vector<double> grad(params_);
    const Evaluation thorough = likelihood_.evaluate(theta_, grad, Likelihood::Starts::AllAnnealed);
    const double raised = current_.value + config_.tol * std::max(1.0, std::abs(current_.value));
    if (!thorough.valid || thorough.value <= raised) {
      crf_.restore();
      return false;
    }
    current_ = thorough;
    grad_ = grad;
    crf_.accept();
    return true;
  }

  // The search along `direction` with cheap trials (Starts::Trial; a trial that is not valid so
  // is evaluated again with every start), then its accepted point evaluated with every start, as
  // every accepted point is. The other starts can only raise L (they add fixed points of larger
  // log Z), so a search that found no decrease with the cheap trials would find none with them
  // either, its curvature steps aside. When they raise the accepted point above the sufficient
  // decrease, or leave it not valid, they found a fixed point the trials did not, and the search
  // is repeated with every start at every trial. On a decrease, trial_ holds the all-starts
  // evaluation of the accepted step.
  WolfeResult search_and_confirm(std::vector<double>& direction, const std::string& kind,
                                 int& trials) {
    WolfeResult search = search_along(direction, kind, Likelihood::Starts::Trial);
    trials += search.trials;
    if (!search.decreased) return search;
    const double slope = std::inner_product(grad_.begin(), grad_.end(), direction.begin(), 0.0);
    confirm(direction, search.best.step, trials);
    if (!trial_step_holds(trial_, current_.value, search.best.step, slope)) {
      ++all_start_searches_;
      search = search_along(direction, kind, Likelihood::Starts::All);
      trials += search.trials;
      if (search.decreased) confirm(direction, search.best.step, trials);
    }
    return search;
  }

  // trial_ as the all-starts evaluation of `step`: evaluated again unless the last trial was
  // that one.
  void confirm(const std::vector<double>& direction, double step, int& trials) {
    if (trial_starts_ == Likelihood::Starts::Trial || step != last_trial_step_) {
      evaluate_trial(direction, step, Likelihood::Starts::All);
      all_start_trials_.push_back({trial_theta_, trial_grad_, trial_});
      ++trials;
    }
  }

  // The strong Wolfe search along `direction` (-g itself unless kind is "lbfgs"), each trial
  // evaluated with `starts`; a cheap trial that is not valid is evaluated again with every start.
  WolfeResult search_along(std::vector<double>& direction, const std::string& kind,
                           Likelihood::Starts starts) {
    if (kind != "lbfgs")
      for (size_t r = 0; r < params_; ++r) direction[r] = -grad_[r];
    double slope = std::inner_product(grad_.begin(), grad_.end(), direction.begin(), 0.0);
    if (!(slope < 0) && kind == "lbfgs") {
      // -H g is no descent direction: the search fails at once and restarts along -g.
      return WolfeResult{};
    }
    const double length = norm(direction);
    WolfeSettings settings;
    settings.max_step = step_bound_ / length;
    // A step within 1% of the best one cannot change L by more than about 1% of its decrease.
    settings.bracket_tol = kBracketTol;
    // Past the border of the valid steps only a sliver of decrease is left to find.
    settings.negligible_gain = kNegligibleGain;
    const double initial = std::min(kind == "lbfgs" ? 1.0 : 1.0 / length, settings.max_step);
    const LinePoint start{0.0, current_.value, slope, true};
    auto phi = [&](double step) {
      search_trial(direction, step, starts);
      if (!trial_.valid && starts == Likelihood::Starts::Trial)
        search_trial(direction, step, Likelihood::Starts::All);
      return LinePoint{
          step, trial_.value,
          std::inner_product(trial_grad_.begin(), trial_grad_.end(), direction.begin(), 0.0),
          trial_.valid};
    };
    return strong_wolfe_search(phi, start, initial, settings);
  }

  // trial_ as the search's evaluation of `step` with `starts`. An evaluation depends on theta,
  // the accepted state and the starts only, so an all-starts one of a theta this iteration
  // evaluated so already (the search repeated with every start tries the cheap search's steps
  // again, whose invalid trials were evaluated with every start) is taken from memory; the
  // inference state is then not that theta's, and confirm() evaluates the accepted step again.
  void search_trial(const std::vector<double>& direction, double step, Likelihood::Starts starts) {
    if (starts == Likelihood::Starts::All) {
      for (size_t r = 0; r < params_; ++r) trial_theta_[r] = theta_[r] + step * direction[r];
      for (const EvaluatedTrial& known : all_start_trials_)
        if (known.theta == trial_theta_) {
          trial_ = known.evaluation;
          trial_grad_ = known.grad;
          trial_starts_ = starts;
          last_trial_step_ = NAN;
          return;
        }
    }
    evaluate_trial(direction, step, starts);
    unconverged_in_search_ += trial_.unconverged;
    if (starts == Likelihood::Starts::All)
      all_start_trials_.push_back({trial_theta_, trial_grad_, trial_});
  }

  void evaluate_trial(const std::vector<double>& direction, double step,
                      Likelihood::Starts starts) {
    for (size_t r = 0; r < params_; ++r) trial_theta_[r] = theta_[r] + step * direction[r];
    trial_ = likelihood_.evaluate(trial_theta_, trial_grad_, starts);
    trial_starts_ = starts;
    last_trial_step_ = step;
  }

  ApproximateCrf& crf_;
  const BaselineConfig& config_;
  TrainingObserver& observer_;
  Likelihood likelihood_;
  size_t params_;
  std::vector<double> theta_, grad_, trial_theta_, trial_grad_;
  Evaluation current_, trial_;
  struct EvaluatedTrial {
    std::vector<double> theta, grad;
    Evaluation evaluation;
  };
  std::vector<EvaluatedTrial> all_start_trials_;  // this iteration's, see search_trial
  double last_trial_step_ = NAN;
  Likelihood::Starts trial_starts_ = Likelihood::Starts::All;
  int all_start_searches_ = 0;  // this iteration's searches repeated with every start
  // No step moves theta by more than 1 or twice the longest accepted one, whichever is larger:
  // unit L-BFGS steps jumped into couplings where the approximate inference has several fixed
  // points and the search then stalled above SGD's L (docs/benchmarks.md, issue 17).
  double step_bound_ = 1.0;
  int64_t unconverged_in_search_ = 0;
  LbfgsMemory memory_;
  IterationRecord last_record_;  // the last iteration's, for the observer's turn after it
};

}  // namespace

bool trial_step_holds(const Evaluation& all_starts, double start_value, double step, double slope) {
  return all_starts.valid &&
         all_starts.value <= start_value + WolfeSettings{}.sufficient_decrease * step * slope;
}

void parse_baseline_learner(const std::string& name, BaselineConfig& config) {
  const size_t dash = name.find('-');
  if (dash == std::string::npos)
    throw InputError("--learner: '" + name +
                     "' is not one of primal-dual, lbp-sgd, lbp-lbfgs, mf-sgd, mf-lbfgs");
  const std::string inference = name.substr(0, dash), optimiser = name.substr(dash + 1);
  if ((inference != "lbp" && inference != "mf") || (optimiser != "sgd" && optimiser != "lbfgs"))
    throw InputError("--learner: '" + name +
                     "' is not one of primal-dual, lbp-sgd, lbp-lbfgs, mf-sgd, mf-lbfgs");
  config.inference =
      inference == "lbp" ? ApproximateInference::LoopyBp : ApproximateInference::MeanField;
  config.lbfgs = optimiser == "lbfgs";
}

TrainResult train_crf_baseline(ApproximateCrf& crf, const BaselineConfig& config,
                               Communicator& comm, TrainingObserver& observer) {
  return config.lbfgs ? LbfgsBaseline(crf, config, comm, observer).run()
                      : train_sgd(crf, config, comm, observer);
}

}  // namespace pdsp
