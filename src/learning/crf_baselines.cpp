#include "pdsp/learning/crf_baselines.hpp"

#include <LBFGS.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pdsp/data/errors.hpp"
#include "pdsp/util/clock.hpp"

namespace pdsp {
namespace {

// The likelihood objective over all ranks, with the per-example pieces SGD needs.
class Likelihood {
 public:
  Likelihood(ApproximateCrf& crf, const BaselineConfig& config, Communicator& comm)
      : crf_(crf),
        config_(config),
        comm_(comm),
        params_(static_cast<size_t>(crf.data().num_params)) {
    d_.resize(params_);
    crf_.ground_truth_moments(d_);
    comm_.allreduce_sum(std::span<double>(d_));
    negative_truth_ = ground_truth_weights(crf.data(), FactorGraph(crf.data()));
    for (double& w : negative_truth_) w = -w;
  }

  // L(theta) and its gradient over every example of every rank.
  double value_and_gradient(std::span<const double> theta, std::span<double> grad) {
    // Inference restarts from the same state at every evaluation, so that L is a function of
    // theta alone: mean field has many fixed points, and which one it reaches (like the messages
    // loopy BP ends with) depends on where it starts. The line search needs that.
    crf_.reset();
    crf_.set_theta(theta);
    std::vector<double> reduced(params_ + 1);
    reduced[params_] = crf_.infer_all();
    crf_.moments(std::span<double>(reduced).first(params_));
    comm_.allreduce_sum(std::span<double>(reduced));
    double value = reduced[params_];
    for (size_t r = 0; r < params_; ++r) {
      grad[r] = reduced[r] - d_[r] + config_.C * theta[r];
      value += -d_[r] * theta[r] + 0.5 * config_.C * theta[r] * theta[r];
    }
    if (!std::isfinite(value))
      throw CollectiveError(crf_.data().source() + ": the likelihood baseline diverged (L = " +
                                number_text(value) + ")",
                            comm_.is_root());
    return value;
  }

  // The stochastic gradient of example `global` (in file order) with its 1/N share of the
  // regulariser. The rank that holds the example computes it and the allreduce hands it to all,
  // so SGD visits the examples in the same order, with the same result, on any rank count.
  void example_gradient(int64_t global, std::span<const double> theta, std::span<double> grad) {
    std::fill(grad.begin(), grad.end(), 0.0);
    const Dataset& data = crf_.data();
    const int64_t k = global - data.first_example;
    if (k >= 0 && k < data.num_examples()) {
      crf_.set_example_theta(k, theta);
      crf_.infer(k);
      crf_.add_example_moments(k, crf_.beliefs(), grad);
      crf_.add_example_moments(k, negative_truth_, grad);
    }
    comm_.allreduce_sum(grad);
    const double share = 1.0 / static_cast<double>(data.file_examples);
    for (size_t r = 0; r < params_; ++r) grad[r] += share * config_.C * theta[r];
  }

 private:
  ApproximateCrf& crf_;
  const BaselineConfig& config_;
  Communicator& comm_;
  size_t params_;
  std::vector<double> d_;
  std::vector<double> negative_truth_;  // minus the ground-truth weights, for example gradients
};

IterationRecord record_of(int iteration, double value, std::span<const double> grad, double step,
                          Clock::time_point started, Clock::time_point iteration_start) {
  IterationRecord r;
  r.iteration = iteration;
  r.objective = r.objective_after_step = value;
  r.dual = r.gap = NAN;
  r.grad_norm = std::sqrt(std::inner_product(grad.begin(), grad.end(), grad.begin(), 0.0));
  r.step = step;
  r.seconds = seconds_since(iteration_start);
  r.elapsed = seconds_since(started);
  return r;
}

TrainResult train_sgd(ApproximateCrf& crf, const BaselineConfig& config, Communicator& comm,
                      TrainingObserver& observer) {
  Likelihood likelihood(crf, config, comm);
  const Dataset& data = crf.data();
  const size_t params = static_cast<size_t>(data.num_params);
  int64_t variables[1] = {data.num_vars()};
  comm.allreduce_sum(std::span<int64_t>(variables));
  const double variables_per_example =
      static_cast<double>(variables[0]) / static_cast<double>(data.file_examples);

  TrainResult result;
  result.state.theta.assign(params, 0.0);
  std::vector<double>& theta = result.state.theta;
  std::vector<double> grad(params);
  const auto started = Clock::now();
  double previous = NAN;
  result.stop_reason = "max-iters";
  for (int epoch = 1; epoch <= config.max_iters; ++epoch) {
    const auto epoch_start = Clock::now();
    const double step = config.step / variables_per_example / epoch;
    for (int64_t n = 0; n < data.file_examples; ++n) {
      likelihood.example_gradient(n, theta, grad);
      for (size_t r = 0; r < params; ++r) theta[r] -= step * grad[r];
    }
    const double value = likelihood.value_and_gradient(theta, grad);
    observer.on_iteration(record_of(epoch, value, grad, step, started, epoch_start));
    result.state.iterations_done = epoch;
    result.objective = value;
    if (!std::isnan(previous) &&
        std::abs(previous - value) <= config.tol * std::max(1.0, std::abs(value))) {
      result.stop_reason = "converged: relative change of the likelihood below tol";
      break;
    }
    previous = value;
  }
  return result;
}

TrainResult train_lbfgs(ApproximateCrf& crf, const BaselineConfig& config, Communicator& comm,
                        TrainingObserver& observer) {
  Likelihood likelihood(crf, config, comm);
  const auto params = static_cast<Eigen::Index>(crf.data().num_params);
  LBFGSpp::LBFGSParam<double> settings;
  settings.epsilon = config.tol;
  settings.epsilon_rel = config.tol;
  settings.max_iterations = config.max_iters;
  LBFGSpp::LBFGSSolver<double> solver(settings);

  // LBFGS++ reports no iterations, so every evaluation of L is one record.
  int evaluations = 0;
  const auto started = Clock::now();
  auto objective = [&](const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    const auto start = Clock::now();
    const double value = likelihood.value_and_gradient(
        std::span<const double>(x.data(), static_cast<size_t>(x.size())),
        std::span<double>(grad.data(), static_cast<size_t>(grad.size())));
    observer.on_iteration(
        record_of(++evaluations, value,
                  std::span<const double>(grad.data(), static_cast<size_t>(grad.size())), 0.0,
                  started, start));
    return value;
  };
  Eigen::VectorXd x = Eigen::VectorXd::Zero(params);
  double value = 0.0;
  TrainResult result;
  try {
    const int iterations = solver.minimize(objective, x, value);
    result.stop_reason =
        iterations >= config.max_iters ? "max-iters" : "converged: gradient below tol";
    result.state.iterations_done = iterations;
  } catch (const CollectiveError&) {
    throw;
  } catch (const std::exception& error) {
    // The approximate objective is not exactly the function whose gradient is used (loopy BP
    // need not converge), so the line search can fail or find an ascent direction; every rank
    // sees the same values and stops here together.
    result.stop_reason = std::string("line search stopped: ") + error.what();
    result.state.iterations_done = evaluations;
  }
  result.state.theta.assign(x.data(), x.data() + x.size());
  result.objective = value;
  return result;
}

}  // namespace

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
  return config.lbfgs ? train_lbfgs(crf, config, comm, observer)
                      : train_sgd(crf, config, comm, observer);
}

}  // namespace pdsp
