#pragma once
// The outer loop of design.md §5: sweeps, one allreduce of [moments, F, D | violation, flags],
// an Armijo step on theta, stopping tests. Collective: every rank calls train() with its slice.
#include <string>
#include <vector>

#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/train_config.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

struct IterationRecord {
  int iteration = 0;
  double objective = 0;                   // F at the beliefs of this iteration (before the step)
  double dual = 0;                        // D at the same beliefs
  double gap = 0;                         // F - D
  double violation = 0;                   // largest marginalisation violation
  double grad_norm = 0;                   // ||grad F||_2
  double step = 0;                        // accepted step size, 0 when no step decreased F
  int step_trials = 0;                    // objective evaluations of the step search
  double objective_after_step = 0;        // F after the step
  double seconds = 0;                     // wall time of this iteration
  double elapsed = 0;                     // since training started
  double message_updates_per_second = 0;  // lambda blocks per second over all ranks
  double seconds_messages = 0, seconds_gradient = 0, seconds_allreduce = 0, seconds_step = 0;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_iteration(const IterationRecord& record) = 0;
};

struct TrainResult {
  std::vector<double> theta;
  int iterations = 0;
  double objective = 0;
  std::string stop_reason;
};

TrainResult train(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer, std::vector<double> initial_theta = {});

}  // namespace pdsp
