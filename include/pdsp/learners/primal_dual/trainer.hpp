#pragma once
// The outer loop of design.md §5: sweeps, one allreduce of [moments, F, D | violation, flags],
// a step on theta (L-BFGS or gradient direction, Armijo backtracking on F), stopping tests.
// Collective: every rank calls train() with its slice.
#include <cmath>
#include <string>
#include <vector>

#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// The settings of the LocalProblem that train() runs on: the trainer owns the temperature, so
// at eps = 0 the problem starts at --smoothing-start (its kernels are chosen for a positive
// temperature), which train() then lowers.
ProblemSettings training_problem_settings(const TrainConfig& config);

TrainResult train(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer, TrainingState start = {});

}  // namespace pdsp
