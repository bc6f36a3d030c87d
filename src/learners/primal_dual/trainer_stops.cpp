// The trainer's stopping tests, its certificates of the gap and, at eps = 0, the smoothing's
// temperature (design.md §5).
#include <algorithm>
#include <cmath>

#include "pdsp/optim/smoothing.hpp"
#include "trainer_loop.hpp"

namespace pdsp {

StopReason Trainer::convergence(const IterationRecord& record) const {
  const double accepted = record.objective_after_step;
  const double scale = std::max(1.0, std::abs(accepted));
  // "converged" only where an optimality test says so: the primal-dual gap, which bounds the
  // distance to the optimum when no counting number is negative, its dual taken at the beliefs
  // made consistent (at eps = 0: the certificate of smoothing.hpp).
  const std::string at_zero =
      smoothing_ ? " at eps = 0 (temperature " + number_text(record.temperature) + ")" : "";
  if (record.gap_certified && record.gap >= 0 && record.gap < config_.tol * scale)
    return stop_converged("converged: primal-dual gap" + at_zero + " below tol");
  // At eps = 0 a decrease of F_w below tol is no sign that the gap is: the smoothed problem must
  // be solved finer than the certificate asks (the tests' trees and loops: a hundredth of tol
  // gives a certified gap below tol, tol itself leaves it tens of times above).
  const double decrease_tol = smoothing_ ? 0.01 * config_.tol : config_.tol;
  if (ends_cycle(record) && !std::isnan(state_.previous_objective) &&
      std::abs(state_.previous_objective - accepted) < decrease_tol * scale)
    // A small decrease is a reason to stop, not a proof of optimality (a slow step on an
    // ill-conditioned problem decreases F slowly far from its minimum).
    return stop_small_change(std::string("relative decrease of F below tol") +
                             (smoothing_ ? " / 100" : "") + " (not certified: " +
                             (dual_bounds_primal_
                                  ? "primal-dual gap " + number_text(record.gap) + at_zero
                              : linear_ ? "no gap test with negative counting numbers"
                                        : "no gap test for a nonlinear potential model") +
                             ")");
  if (config_.max_seconds > 0 && maxima_[1] >= config_.max_seconds) return stop_time_limit();
  if (maxima_[2] > 0) return stop_signal();
  if (record.iteration >= config_.max_iters) return stop_iteration_limit();
  return no_stop();
}

void Trainer::certify_where_it_counts(IterationRecord& record) {
  if (!dual_bounds_primal_ || smoothing_) return;
  const double scale = std::max(1.0, std::abs(record.objective_after_step));
  // A raw gap below zero only says that the beliefs are not consistent yet: no reason to pay.
  if (!(std::abs(record.gap) < config_.tol * scale) && !convergence(record).stops()) return;
  // The step search left the beliefs of this iteration's evaluation as they were, and every
  // rank decides alike from reduced values.
  const auto start = Clock::now();
  const std::span<double> moments = consistent_moments();
  const double entropy = comm_.allreduce_sum(problem_.consistent_beliefs(moments));
  comm_.allreduce_sum(moments);
  subtract_d(moments);
  record.dual = entropy + reduced_[params_ + 2] - truth_offset_ - regularizer_.conjugate(moments);
  record.gap = record.objective - record.dual;
  record.gap_certified = true;
  record.seconds_gradient += seconds_since(start);
}

double Trainer::certified_dual() {
  return state_.dual_bundle.add(consistent_moments(), reduced_[params_ + 2] - truth_offset_, d_,
                                regularizer_, dual_bundle_capacity(static_cast<int64_t>(params_)));
}

StopReason Trainer::continue_smoothing(const IterationRecord& record, const StopReason& stop) {
  const bool small_decrease = stop.kind == StopKind::SmallChange;
  if (stop.stops() && !small_decrease) return stop;
  const double scale = std::max(1.0, std::abs(record.objective_after_step));
  const double next = next_temperature({.temperature = state_.smoothing,
                                        .smoothed_gap = record.smoothed_gap,
                                        .entropy = entropy_,
                                        .target = config_.tol * scale,
                                        .small_decrease = small_decrease});
  if (!(next < state_.smoothing)) return stop;
  // F changes with the temperature: the curvature pairs and the last F belong to the old one.
  state_.smoothing = next;
  problem_.set_temperature(next);
  state_.lbfgs.clear();
  state_.previous_objective = NAN;
  return no_stop();
}

}  // namespace pdsp
