#include "pdsp/learners/primal_dual/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "pdsp/data/allocation.hpp"
#include "pdsp/features/potential_models.hpp"
#include "pdsp/learners/primal_dual/kronecker_curvature.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/optim/smoothing.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/huge_pages.hpp"
#include "pdsp/util/vector_ops.hpp"
#include "trainer_loop.hpp"

namespace pdsp {
namespace {

// The parameter whose gradient is not finite (or, when all are, the largest one), for the
// divergence error.
std::string divergence_cause(std::span<const double> grad) {
  if (grad.empty()) return "";
  auto worst = std::find_if(grad.begin(), grad.end(), [](double g) { return !std::isfinite(g); });
  if (worst == grad.end())
    worst = std::max_element(grad.begin(), grad.end(),
                             [](double a, double b) { return std::abs(a) < std::abs(b); });
  return "; the gradient of theta[" + std::to_string(worst - grad.begin()) + "] is " +
         number_text(*worst);
}

// The minimiser of the quadratic through F(0), its slope along the direction and F(eta)
// (Nocedal & Wright §3.5), kept within [eta / 16, eta / 2] so that the search neither stalls nor
// shrinks to nothing on one bad trial (or a non-finite F), and rounded to a power of two. The
// interpolant rests on F(eta) - F(0), a difference of nearly equal sums: unrounded, its round-off
// (which differs with the rank count) would enter theta through every step; rounded, other rank
// counts take the very same step unless the interpolant falls at a rounding point.
double interpolated_step(double f0, double slope, double eta, double f_eta) {
  const double curvature = f_eta - f0 - slope * eta;
  const double step = curvature > 0 ? -slope * eta * eta / (2.0 * curvature) : 0.5 * eta;
  if (!std::isfinite(step)) return eta / 16;
  return std::exp2(std::round(std::log2(std::clamp(step, eta / 16, eta / 2))));
}

}  // namespace

Trainer::Trainer(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                 TrainingObserver& observer, TrainingState start)
    : problem_(problem),
      config_(config),
      comm_(comm),
      observer_(observer),
      state_(std::move(start)),
      regularizer_{config.C, config.p},
      params_(static_cast<size_t>(problem.num_params())),
      smoothing_(trains_by_smoothing(config.epsilon)),
      linear_(problem.model().is_linear()),
      lbfgs_(config.theta_step == "lbfgs") {
  // The smoothing's certificate is a dual bound, which only a linear model has.
  if (smoothing_ && !linear_)
    throw InputError(config.data + ": --epsilon 0: the " + problem.model().name() +
                     " potential model is nonlinear and trains at eps > 0 only");
  // Without typed variable blocks the model would be a diagonal from the moments alone, which
  // was not measured to help: those data sets keep gamma I.
  if (lbfgs_ && config.lbfgs_curvature != "identity" && linear_) {
    using Kind = KroneckerCurvature::Kind;
    const Kind kind = config.lbfgs_curvature == "softmax"     ? Kind::Softmax
                      : config.lbfgs_curvature == "kronecker" ? Kind::Kronecker
                                                              : Kind::Automatic;
    curvature_.emplace(problem, comm, regularizer_, kind);
    if (!curvature_->has_blocks()) curvature_.reset();
  }
  // Collective, so that every rank reports a failure in one line rather than aborting the job.
  // The L-BFGS memory is reserved at its full size here, so it cannot fail to grow mid-run.
  const int memory_vectors = lbfgs_ ? 2 * config.lbfgs_pairs() + 2 : 0;
  // The consistent beliefs' moments have a vector of their own at eps = 0 only.
  const int moment_vectors = smoothing_ ? 2 : 1;
  const bool gradient_apart = curvature_.has_value();
  run_collectively(comm_, [&] {
    allocate(config.data,
             "the trainer's vectors of " + std::to_string(params_) + " parameters (theta, " +
                 (gradient_apart ? "gradient, " : "") + "direction, trial point, d, " +
                 std::to_string(moment_vectors) + " of moments and gradient, " +
                 std::to_string(memory_vectors) + " of the L-BFGS memory)",
             (4.0 + gradient_apart + moment_vectors + memory_vectors) * sizeof(double) *
                 static_cast<double>(params_),
             [&] {
               resize_on_huge_pages(direction_, params_);
               resize_on_huge_pages(trial_, params_);
               resize_on_huge_pages(reduced_, moment_vectors * params_ + 4);
               if (gradient_apart) resize_on_huge_pages(gradient_storage_, params_);
               reserve_on_huge_pages(d_, params_ + 1);
               if (state_.theta.empty()) state_.theta = problem.model().initial_theta();
               if (lbfgs_) state_.lbfgs.reserve(params_, config.lbfgs_pairs());
             });
  });
  grad_ = gradient_apart ? std::span<double>(gradient_storage_)
                         : std::span<double>(reduced_).first(params_);
  if (smoothing_ && std::isnan(state_.smoothing)) state_.smoothing = config.smoothing_start;
  compute_global_terms();
  if (TreeFunctions* trees = problem.model().tree_functions()) {
    // A damaged checkpoint is refused on every rank alike.
    if (!state_.trees.empty())
      run_collectively(comm, [&] { trees->load(state_.trees, "the checkpoint"); });
    tree_fits_ = std::make_unique<TreeFits>(problem, *trees, comm);
  }
}

void Trainer::compute_global_terms() {
  d_.assign(params_, 0.0);
  if (linear_) problem_.ground_truth_moments(d_);
  d_.push_back(static_cast<double>(problem_.messages_per_sweep()));
  d_.push_back(linear_ ? problem_.ground_truth_offset() : 0.0);
  // Regime flags decide which collectives run, so they are agreed over all ranks: a rank may
  // hold no negative counting number (or no example at all) while another does.
  const bool exact = problem_.counting().exact_examples() == problem_.data().num_examples();
  double regime[2] = {problem_.is_saddle_problem() ? 1.0 : 0.0, exact ? 0.0 : 1.0};
  comm_.allreduce(d_, regime);
  truth_offset_ = d_.back();
  d_.pop_back();
  message_blocks_ = d_.back();
  d_.pop_back();
  saddle_ = regime[0] > 0;
  // On forests with Bethe numbers a second round of sweeps at the theta the step search has just
  // swept at only moves the messages along the trees, as the next trial's sweeps do: OCR reached
  // the same optimum in 132 iterations instead of 130, at 18% less time. On loopy graphs the
  // second round is what keeps the messages near their fixed point (yeast without it: the step
  // search backtracked to steps too small to count and the run stopped with F 5e-4 higher).
  swept_messages_carry_over_ = regime[1] == 0 && !smoothing_ && problem_.temperature() > 0;
  // At eps = 0 every counting number is >= 0 (LocalProblem checks), so the certificate of
  // smoothing.hpp bounds the distance to the optimum.
  dual_bounds_primal_ = !saddle_ && linear_;
}

void Trainer::evaluate(IterationRecord& record) {
  if (!swept_messages_carry_over_ || state_.iterations_done == 0) {
    const auto start = Clock::now();
    problem_.sweep(config_.sweeps);
    problem_.resolve_kinks();
    record.seconds_messages = seconds_since(start);
  }

  auto phase = Clock::now();
  const LocalEvaluation local = problem_.evaluate();
  const std::span<double> moments = std::span<double>(reduced_).first(params_);
  reduced_[params_] = local.objective;
  if (linear_) {
    problem_.model_moments(moments);
  } else {
    // The gradient's ground-truth part at this theta goes in the reduced moments (d_ stays 0).
    problem_.moments_less_truth(moments);
    reduced_[params_] -= problem_.ground_truth_score();
  }
  reduced_[params_ + 1] = local.dual;
  reduced_[params_ + 2] = local.expected_loss;
  maxima_[0] = local.violation;
  maxima_[1] = state_.seconds_trained + seconds_since(started_);
  maxima_[2] = observer_.stop_requested() ? 1.0 : 0.0;
  if (smoothing_) problem_.consistent_beliefs(consistent_moments());
  record.seconds_gradient = seconds_since(phase);
  reduced_[params_ + 3] = maxima_[3] = record.seconds_messages + record.seconds_gradient;
  phase = Clock::now();
  // The consistent moments are in reduced_ (and travel here) only at eps = 0 (every iteration);
  // elsewhere certify_where_it_counts reduces them where it needs them.
  comm_.allreduce(reduced_, maxima_);
  record.seconds_allreduce = seconds_since(phase);
  const double mean_compute = reduced_[params_ + 3] / comm_.size();
  record.load_imbalance = mean_compute > 0 ? maxima_[3] / mean_compute : 1.0;

  if (!gradient_storage_.empty())
    std::copy(reduced_.begin(), reduced_.begin() + static_cast<std::ptrdiff_t>(params_),
              grad_.begin());
  subtract_d(grad_);
  const double conjugate = regularizer_.conjugate(grad_);
  regularizer_.add_gradient(state_.theta, grad_);
  record.objective = full_objective(reduced_[params_], state_.theta);
  // A nonlinear model has no dual: its D and gap are not numbers.
  record.dual = linear_ ? reduced_[params_ + 1] - truth_offset_ - conjugate : NAN;
  record.gap = record.objective - record.dual;
  record.temperature = problem_.temperature();
  if (smoothing_) {
    // The smoothing's terms sum tau H(b): the dual terms of the beliefs less their expected loss.
    entropy_ = reduced_[params_ + 1] - reduced_[params_ + 2];
    record.smoothed_gap = record.gap;
    record.dual = certified_dual();
    record.gap = record.objective - record.dual;
    record.gap_certified = true;
  }
  record.violation = maxima_[0];
  record.grad_norm = std::sqrt(dot(grad_, grad_));
  // Every rank holds the same reduced values, so all of them stop here together.
  if (!std::isfinite(record.objective) || !std::isfinite(record.grad_norm))
    throw CollectiveError(
        config_.data + ": training diverged at iteration " + std::to_string(record.iteration) +
            ": F = " + number_text(record.objective) +
            ", |grad| = " + number_text(record.grad_norm) + divergence_cause(grad_) +
            " (feature values too large for double precision, or --epsilon "
            "too small?)",
        comm_.is_root());
}

// Each trial evaluates F at the trial theta after the same sweeps from the same messages, which
// approximates min over lambda of F: the function whose curvature the L-BFGS pairs measure. At
// fixed messages F curves more steeply than that, and the search there rejects the quasi-Newton
// unit step (yeast, eps = 1: steps of 1/256 and 1,082 iterations, against unit steps and 189
// iterations with the sweeps); in the saddle case (a negative counting number) F at fixed
// messages is not even what training minimises. The sweeps only lower F (each block update
// minimises it over its block), so an accepted trial still decreases F(theta, lambda).
bool Trainer::line_search(IterationRecord& record, double first_step, bool interpolate,
                          double slope, const TrialPlacement& place) {
  double eta = first_step;
  for (int trials = 0; trials < config_.max_step_trials; ++trials) {
    ++record.step_trials;
    const std::span<const double> theta = place(eta);
    problem_.restore_messages();
    problem_.sweep(config_.sweeps);
    problem_.resolve_kinks();
    const double candidate = full_objective(comm_.allreduce_sum(local_objective()), theta);
    if (candidate <= record.objective + 1e-4 * eta * slope) {
      record.objective_after_step = candidate;
      record.step = eta;
      return true;
    }
    eta = interpolate ? interpolated_step(record.objective, slope, eta, candidate) : 0.5 * eta;
  }
  return false;
}

// Every trial of a theta step lands in trial_; an accepted one becomes theta.
bool Trainer::search_theta(IterationRecord& record, double first_step, bool interpolate) {
  const std::vector<double>& theta = state_.theta;
  const bool moved =
      line_search(record, first_step, interpolate, dot(grad_, direction_), [&](double eta) {
        for (size_t r = 0; r < params_; ++r) trial_[r] = theta[r] + eta * direction_[r];
        problem_.set_theta(trial_);
        return std::span<const double>(trial_);
      });
  if (moved) state_.theta.swap(trial_);
  return moved;
}

void Trainer::take_step(IterationRecord& record) {
  const auto start = Clock::now();
  // Every trial sweeps after restoring, and so does what follows a failed search (below, or the
  // next evaluation): the examples one sweep along their trees makes exact need no copy.
  problem_.keep_messages(MessagesKept::ForASweep);
  record.objective_after_step = record.objective;
  LbfgsMemory& memory = state_.lbfgs;
  // This iteration's gradient (at its own messages) completes the pair of the last step.
  if (lbfgs_) memory.complete_pair(grad_, config_.lbfgs_pairs());
  const bool moved = steps_on_trees(record) ? step_trees(record) : step_theta(record);
  if (!moved) {  // no step decreased F: keep the potentials, let the sweeps go on
    problem_.set_theta(state_.theta);
    problem_.restore_messages();
    if (swept_messages_carry_over_) problem_.sweep(config_.sweeps);
    problem_.resolve_kinks();
  }
  record.lbfgs_pairs = memory.pairs(params_);
  record.seconds_step = seconds_since(start);
}

bool Trainer::step_theta(IterationRecord& record) {
  LbfgsMemory& memory = state_.lbfgs;
  bool moved = false;
  if (lbfgs_ && (memory.pairs(params_) > 0 || curvature_)) {
    InverseCurvature inverse;
    if (curvature_) {
      // From this iteration's beliefs and moments, so that a resumed run rebuilds the same P.
      curvature_->refresh(state_.theta, std::span<const double>(reduced_).first(params_));
      inverse = [this](std::span<const double> in, std::span<double> out) {
        curvature_->solve(in, out);
      };
    }
    const bool pairs = memory.pairs(params_) > 0;
    // trial_ is free until the search.
    memory.direction(grad_, direction_, inverse, !(curvature_ && curvature_->is_softmax()), trial_);
    // H carries the scale of theta, so the unit step comes first and is not grown.
    moved = dot(grad_, direction_) < 0 && search_theta(record, 1.0, true);
    record.direction = moved ? (pairs ? "lbfgs" : "curvature") : "restart";
    if (!moved) memory.clear();
  }
  if (!moved) {
    for (size_t r = 0; r < params_; ++r) direction_[r] = -grad_[r];
    if (record.direction.empty()) record.direction = "gradient";
    const int trials_before = record.step_trials;
    // A run's first search along the gradient has no step to carry over: it starts from F and
    // the gradient, by interpolation.
    const bool first = std::isnan(state_.step);
    moved = search_theta(record, first ? first_gradient_step(record) : state_.step, first);
    // Grow the step only when it was accepted at once: after a backtrack the accepted step is
    // about the largest that works, and doubling it would cost a failed trial next time.
    if (moved)
      state_.step =
          record.step_trials == trials_before + 1 ? std::min(2.0 * record.step, 1e12) : record.step;
  }
  if (moved && lbfgs_) {
    // trial_ holds the previous theta: the step taken is the difference.
    for (size_t r = 0; r < params_; ++r) trial_[r] = state_.theta[r] - trial_[r];
    memory.remember_step(trial_, grad_);
  }
  return moved;
}

// 2 F / |g|^2, where F's quadratic model along -g with F's slope would reach 0 at its minimum:
// at most --step, rounded to a power of two (the same on any rank count). F >= 0 wherever the
// ground truth is a feasible labelling of zero loss, so F* is at most F's way down and the
// model's minimum, from its curvature, no further than this (a convex F curves at least as
// much). A unit first step took 15 halvings on a 7.4-million-parameter chain (issue 66).
double Trainer::first_gradient_step(const IterationRecord& record) const {
  const double to_zero = 2.0 * record.objective / (record.grad_norm * record.grad_norm);
  if (!(to_zero > 0) || !std::isfinite(to_zero)) return config_.initial_step;
  return std::min(config_.initial_step, std::exp2(std::round(std::log2(to_zero))));
}

// The round's leaves are Newton steps, so the unit step comes first; halving keeps every trial's
// leaf values and margins what a reload computes (a checkpoint resumes bitwise).
bool Trainer::step_trees(IterationRecord& record) {
  record.direction = "trees";
  const double slope = tree_fits_->add_step_round(problem_, config_.C);
  double scale = 1.0;
  const bool moved = slope < 0 && line_search(record, 1.0, false, slope, [&](double eta) {
                       tree_fits_->scale_step(eta / scale);
                       scale = eta;
                       problem_.set_theta(state_.theta);
                       return std::span<const double>(state_.theta);
                     });
  if (!moved) tree_fits_->scale_step(0.0);  // the round stays, adding nothing
  return moved;
}

TrainResult Trainer::run() {
  started_ = Clock::now();
  if (smoothing_) problem_.set_temperature(state_.smoothing);
  problem_.set_theta(state_.theta);
  TrainResult result;
  result.objective = state_.previous_objective;
  result.stop = state_.stop.stops() ? state_.stop : stop_iteration_limit();
  while (!state_.stop.stops() && state_.iterations_done < config_.max_iters) {
    IterationRecord record;
    record.iteration = state_.iterations_done + 1;
    const auto start = Clock::now();
    evaluate(record);
    take_step(record);
    certify_where_it_counts(record);
    record.seconds = seconds_since(start);
    record.elapsed = state_.seconds_trained + seconds_since(started_);
    record.message_updates_per_second =
        record.seconds_messages > 0 ? message_blocks_ * config_.sweeps / record.seconds_messages
                                    : 0.0;
    observer_.on_iteration(record);

    StopReason stop = convergence(record);
    if (ends_cycle(record)) state_.previous_objective = record.objective_after_step;
    if (smoothing_) stop = continue_smoothing(record, stop);
    state_.iterations_done = record.iteration;
    result.objective = record.objective_after_step;
    if (tree_fits_) state_.trees = problem_.model().tree_functions()->stored();
    // The state that resumes after this iteration, without a copy of the L-BFGS memory.
    stop = finish_iteration(observer_, state_, record, stop);
    if (stop.stops()) {
      result.stop = stop;
      break;
    }
  }
  result.state = std::move(state_);
  result.state.seconds_trained += seconds_since(started_);
  return result;
}

TrainResult train(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer, TrainingState start) {
  return Trainer(problem, config, comm, observer, std::move(start)).run();
}

}  // namespace pdsp
