#include "pdsp/learners/stochastic/stochastic_steps.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "pdsp/util/clock.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

StochasticConfig stochastic_config(const TrainConfig& config) {
  return {config.C,           config.batch,           config.seed,   config.max_iters,
          config.max_seconds, config.objective_every, config.epsilon};
}

std::vector<int64_t> visiting_order(int64_t examples, int seed, int epoch) {
  std::vector<int64_t> order(static_cast<size_t>(examples));
  std::iota(order.begin(), order.end(), 0);
  // Fisher-Yates with the engine's raw draws: std::shuffle's use of them is the library's own,
  // and the order must not change with it.
  std::mt19937_64 rng(static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull +
                      static_cast<uint64_t>(epoch));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

namespace {

class StochasticSteps {
 public:
  StochasticSteps(BatchOracle& oracle, const Dataset& slice, const StochasticConfig& config,
                  Communicator& comm, TrainingObserver& observer)
      : oracle_(oracle), slice_(slice), config_(config), comm_(comm), observer_(observer) {
    double count[1] = {static_cast<double>(slice.num_examples())};
    comm_.allreduce_sum(std::span<double>(count));
    examples_ = static_cast<int64_t>(count[0]);
  }

  TrainResult run(TrainingState start) {
    state_ = std::move(start);
    if (state_.stop.is_final()) return finished_run(state_);
    TrainResult result;
    result.objective = state_.previous_objective;
    const size_t params = static_cast<size_t>(slice_.num_params);
    if (state_.iterate.empty()) {
      state_.iterate.assign(params, 0.0);
      state_.theta.assign(params, 0.0);
      state_.steps = 0;
    }
    // F(0) is the sum of the h_n(0), the regulariser being 0 there.
    radius_ = std::sqrt(2.0 * oracle_.objective(std::vector<double>(params, 0.0)) / config_.C);
    started_ = Clock::now();
    result.stop = stop_iteration_limit();
    for (int epoch = state_.iterations_done + 1; epoch <= config_.max_epochs; ++epoch) {
      IterationRecord record = run_epoch(epoch);
      const bool due = epoch == config_.max_epochs ||
                       (config_.objective_every > 0 && epoch % config_.objective_every == 0);
      if (due) evaluate_objective(record);
      StopReason stop = stop_after(record);
      // A run that ends reports its model's objective.
      if (stop.stops() && !due) evaluate_objective(record);
      record.elapsed = trained_seconds();
      observer_.on_iteration(record);
      state_.iterations_done = epoch;
      if (!std::isnan(record.objective)) state_.previous_objective = record.objective;
      result.objective = state_.previous_objective;
      stop = finish_iteration(observer_, state_, record, stop);
      if (stop.stops()) {
        result.stop = stop;
        break;
      }
    }
    result.state = state_;
    result.state.seconds_trained = trained_seconds();
    return result;
  }

 private:
  // One pass over the permutation of epoch `epoch`, a step per batch.
  IterationRecord run_epoch(int epoch) {
    const auto epoch_start = Clock::now();
    IterationRecord record;
    record.iteration = epoch;
    // No dual: the objective alone, where it is evaluated.
    record.objective = record.objective_after_step = NAN;
    record.dual = record.gap = record.grad_norm = NAN;
    record.temperature = config_.epsilon;
    record.message_updates_per_second = NAN;
    const std::vector<int64_t> order = visiting_order(examples_, config_.seed, epoch);
    const size_t params = state_.iterate.size();
    std::vector<int64_t> local;
    const int64_t batch = std::min<int64_t>(config_.batch, std::max<int64_t>(examples_, 1));
    // [params] the subgradients' sum, then the count of ranks that met a value that is not finite.
    std::vector<double> sums(params + 1);
    const std::span<double> subgradients = std::span<double>(sums).first(params);
    for (int64_t first = 0; first < examples_; first += batch) {
      const int64_t last = std::min(examples_, first + batch);
      local.clear();
      for (int64_t k = first; k < last; ++k) {
        const int64_t n = order[k] - slice_.first_example;
        if (n >= 0 && n < slice_.num_examples()) local.push_back(n);
      }
      auto phase = Clock::now();
      std::fill(sums.begin(), sums.end(), 0.0);
      const bool finite = oracle_.add_subgradients(local, state_.iterate, subgradients);
      sums[params] = finite ? 0.0 : 1.0;
      record.seconds_gradient += seconds_since(phase);
      phase = Clock::now();
      comm_.allreduce_sum(std::span<double>(sums));
      record.seconds_allreduce += seconds_since(phase);
      if (sums[params] > 0) oracle_.explain_non_finite();
      phase = Clock::now();
      record.step = step(subgradients, last - first);
      average();
      record.seconds_step += seconds_since(phase);
    }
    record.seconds = seconds_since(epoch_start);
    return record;
  }

  // The step on the batch's summed subgradients and the projection. Returns the size 1 / (C t).
  double step(std::span<const double> subgradients, int64_t batch_size) {
    const double t = static_cast<double>(++state_.steps);
    const double shrink = 1.0 - 1.0 / t;
    const double scale =
        static_cast<double>(examples_) / (config_.C * t * static_cast<double>(batch_size));
    std::vector<double>& theta = state_.iterate;
    for (size_t r = 0; r < theta.size(); ++r)
      theta[r] = shrink * theta[r] - scale * subgradients[r];
    const double norm = std::sqrt(dot(theta, theta));
    if (norm > radius_)
      for (double& value : theta) value *= radius_ / norm;
    return 1.0 / (config_.C * t);
  }

  // The average with weights proportional to t.
  void average() {
    const double mix = 2.0 / (static_cast<double>(state_.steps) + 1.0);
    for (size_t r = 0; r < state_.theta.size(); ++r)
      state_.theta[r] += mix * (state_.iterate[r] - state_.theta[r]);
  }

  // F at the average (the model), not counted as training time.
  void evaluate_objective(IterationRecord& record) {
    const auto start = Clock::now();
    record.objective = record.objective_after_step = oracle_.objective(state_.theta);
    objective_seconds_ += seconds_since(start);
  }

  // Training time: the runs before a resume, and this one's without its objective evaluations.
  double trained_seconds() const {
    return state_.seconds_trained + seconds_since(started_) - objective_seconds_;
  }

  // No stop to go on; the same on every rank. Nothing here certifies optimality.
  StopReason stop_after(const IterationRecord& record) {
    return limit_or_signal(comm_, observer_.stop_requested(), trained_seconds(),
                           config_.max_seconds, record.iteration, config_.max_epochs);
  }

  BatchOracle& oracle_;
  const Dataset& slice_;
  const StochasticConfig config_;
  Communicator& comm_;
  TrainingObserver& observer_;
  int64_t examples_ = 0;  // over all ranks
  TrainingState state_;
  double radius_ = 0;  // of the ball that holds the optimum
  Clock::time_point started_;
  double objective_seconds_ = 0;
};

}  // namespace

TrainResult train_stochastic(BatchOracle& oracle, const Dataset& slice,
                             const StochasticConfig& config, Communicator& comm,
                             TrainingObserver& observer, TrainingState start) {
  return StochasticSteps(oracle, slice, config, comm, observer).run(std::move(start));
}

}  // namespace pdsp
