#pragma once
// Small helpers shared by the training tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "pdsp/learners/primal_dual/trainer.hpp"

namespace pdsp::testing {

// Keeps every iteration record of a training run.
class Recorder final : public TrainingObserver {
 public:
  void on_iteration(const IterationRecord& record) override { records.push_back(record); }
  std::vector<IterationRecord> records;
};

// A training problem's settings on the tests' in-memory data: eps, counting numbers, the rest
// as ProblemSettings has them.
inline ProblemSettings training_settings(double epsilon, CountingMode counting) {
  ProblemSettings settings;
  settings.epsilon = epsilon;
  settings.counting = counting;
  settings.source = "tiny";
  return settings;
}

inline double max_abs_difference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Sets a standard normal theta (from `seed`), sweeps 5 times and evaluates: beliefs to test a
// curvature model at. Returns theta.
inline std::vector<double> evaluate_at_random_theta(LocalProblem& problem, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> theta(static_cast<size_t>(problem.num_params()));
  for (double& t : theta) t = normal(rng);
  problem.set_theta(theta);
  problem.sweep(5);
  problem.evaluate();
  return theta;
}

// The message of the InputError `run` throws, or of the CollectiveError a collective step turns
// it into; a test failure when it throws neither.
inline std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  } catch (const CollectiveError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

}  // namespace pdsp::testing
