#include "pdsp/learning/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "pdsp/learning/regularizer.hpp"

namespace pdsp {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double dot(std::span<const double> a, std::span<const double> b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// Everything the trainer needs that is global over ranks, computed once.
struct GlobalTerms {
  std::vector<double> d;  // empirical feature sums at the ground truth
  double message_blocks = 0;
};

GlobalTerms global_terms(LocalProblem& problem, Communicator& comm) {
  GlobalTerms g;
  g.d.resize(static_cast<size_t>(problem.num_params()));
  problem.ground_truth_moments(g.d);
  g.d.push_back(static_cast<double>(problem.messages_per_sweep()));
  comm.allreduce_sum(std::span<double>(g.d));
  g.message_blocks = g.d.back();
  g.d.pop_back();
  return g;
}

}  // namespace

TrainResult train(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer, std::vector<double> initial_theta) {
  const size_t params = static_cast<size_t>(problem.num_params());
  const Regularizer regularizer{config.C, config.p};
  const GlobalTerms global = global_terms(problem, comm);
  const bool dual_bounds_primal =
      config.epsilon > 0 &&
      std::all_of(problem.counting().var.begin(), problem.counting().var.end(),
                  [](double c) { return c >= 0; });

  TrainResult result;
  result.theta =
      initial_theta.empty() ? std::vector<double>(params, 0.0) : std::move(initial_theta);
  std::vector<double>& theta = result.theta;
  std::vector<double> trial(params), grad(params);
  // [model moments z (params) | F part | D part] summed, [violation] maximised.
  std::vector<double> reduced(params + 2);
  // Maxima: [violation, seconds since start]. The clock travels in the allreduce so that every
  // rank takes the same decision on the time limit.
  double maxima[2] = {0, 0};

  // The F of the accepted theta (with regulariser and -d.theta), for the relative-decrease test.
  const auto full_objective = [&](double local_sum, std::span<const double> at) {
    return local_sum - dot(global.d, at) + regularizer.value(at);
  };

  const bool saddle = problem.is_saddle_problem();
  std::vector<double> saved_messages;
  problem.set_theta(theta);
  double step = config.initial_step;
  double previous = NAN;
  const auto started = Clock::now();
  result.stop_reason = "max-iters";
  for (int iteration = 1; iteration <= config.max_iters; ++iteration) {
    IterationRecord record;
    record.iteration = iteration;
    const auto iteration_start = Clock::now();

    // (a) message sweeps on the local examples.
    problem.sweep(config.sweeps);
    problem.resolve_kinks();
    record.seconds_messages = seconds_since(iteration_start);

    // (b) beliefs, local moments and objective terms, one allreduce.
    auto phase = Clock::now();
    const LocalEvaluation local = problem.evaluate();
    problem.model_moments(std::span<double>(reduced).first(params));
    reduced[params] = local.objective;
    reduced[params + 1] = local.dual;
    maxima[0] = local.violation;
    maxima[1] = seconds_since(started);
    record.seconds_gradient = seconds_since(phase);
    phase = Clock::now();
    comm.allreduce(reduced, maxima);
    record.seconds_allreduce = seconds_since(phase);

    std::vector<double> moment_gap(params);
    for (size_t r = 0; r < params; ++r) {
      moment_gap[r] = reduced[r] - global.d[r];
      grad[r] = moment_gap[r];
    }
    regularizer.add_gradient(theta, grad);
    const double objective = full_objective(reduced[params], theta);
    record.objective = objective;
    record.dual = reduced[params + 1] - regularizer.conjugate(moment_gap);
    record.gap = record.objective - record.dual;
    record.violation = maxima[0];
    const double grad_sq = dot(grad, grad);
    record.grad_norm = std::sqrt(grad_sq);

    // (c) Armijo backtracking on F. Convex case: at fixed messages, with the c_v = 0 blocks
    // re-solved per trial. Saddle case (some c_v < 0): F at fixed messages is not what training
    // minimises, so each trial first runs the same sweeps from the same messages at its theta.
    phase = Clock::now();
    if (saddle) saved_messages = problem.messages();
    const auto trial_objective = [&](std::span<const double> at) {
      problem.set_theta(at);
      if (saddle) {
        problem.messages() = saved_messages;
        problem.sweep(config.sweeps);
      }
      problem.resolve_kinks();
      return full_objective(comm.allreduce_sum(problem.objective()), at);
    };
    double accepted = objective;
    for (double eta = step; record.step_trials < config.max_step_trials; eta *= 0.5) {
      ++record.step_trials;
      for (size_t r = 0; r < params; ++r) trial[r] = theta[r] - eta * grad[r];
      const double candidate = trial_objective(trial);
      if (candidate <= objective - 1e-4 * eta * grad_sq) {
        theta.swap(trial);
        accepted = candidate;
        record.step = eta;
        step = std::min(2.0 * eta, 1e12);
        break;
      }
    }
    if (record.step == 0.0) {  // no step decreased F: keep theta, let the sweeps go on
      problem.set_theta(theta);
      if (saddle) problem.messages() = saved_messages;
      problem.resolve_kinks();
    }
    record.objective_after_step = accepted;
    record.seconds_step = seconds_since(phase);

    record.seconds = seconds_since(iteration_start);
    record.elapsed = seconds_since(started);
    record.message_updates_per_second =
        record.seconds_messages > 0
            ? global.message_blocks * config.sweeps / record.seconds_messages
            : 0.0;
    observer.on_iteration(record);
    result.iterations = iteration;
    result.objective = accepted;

    const double scale = std::max(1.0, std::abs(accepted));
    if (!std::isnan(previous) && std::abs(previous - accepted) <= config.tol * scale) {
      result.stop_reason = "converged: relative decrease below tol";
      break;
    }
    if (dual_bounds_primal && record.gap >= 0 && record.gap <= config.tol * scale &&
        record.violation <= std::sqrt(config.tol)) {
      result.stop_reason = "converged: primal-dual gap below tol";
      break;
    }
    if (config.max_seconds > 0 && maxima[1] >= config.max_seconds) {
      result.stop_reason = "time limit";
      break;
    }
    previous = accepted;
  }
  return result;
}

}  // namespace pdsp
