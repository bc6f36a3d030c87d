#pragma once
// The outer loop of design.md §5: sweeps, one allreduce of [moments, F, D | violation, flags],
// a step on theta (L-BFGS or gradient direction, Armijo backtracking on F) or, every other
// iteration of a model with trees, a boosting round scaled by the same search; stopping tests.
// Collective: every rank calls train() with its slice.
#include <cmath>
#include <memory>
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
// The LocalProblem of a learner that trains on one (primal-dual, domke, dlpw): those settings and
// the potential model of --unary-model and --pairwise-model on `slice`; fills in the counting
// numbers `auto` resolved to. `smoothed` false: at eps = 0 the kernels run at 0 itself (a
// learner without the continuation). Collective: every rank throws the lowest failing rank's
// error.
std::unique_ptr<LocalProblem> make_training_problem(const Dataset& slice, TrainConfig& config,
                                                    Communicator& comm, bool smoothed = true);
// Throws (collectively) when negative counting numbers make F a saddle in the messages at
// eps > 0: a learner that takes F's minimum over the messages as its objective (dlpw's dual
// losses, domke's fits at fixed messages) has no such minimum to work with there.
void refuse_saddle_problem(const LocalProblem& problem, const TrainConfig& config,
                           Communicator& comm);

TrainResult train(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                  TrainingObserver& observer, TrainingState start = {});

}  // namespace pdsp
