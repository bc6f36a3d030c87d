#pragma once
// Domke's reduction of structured learning to logistic regression (NIPS 2013, Algorithm 1): at
// fixed messages, F(theta, lambda) separates over the region kinds, and minimising it over the
// parameters one kind's potentials read is a logistic regression of each region's states, biased
// by the messages into it (and the loss). An outer iteration fits the variables' function class
// at the current messages, runs --fit-sweeps message sweeps, fits the factors' class, and sweeps
// again. Each fit minimises F at fixed messages plus the regulariser by L-BFGS (at most
// --fit-iters iterations) through the potential model's backward pass, so a linear or a network
// class fits alike; a trees class grows by boosting rounds (tree_fits.hpp). It continues from
// `start` (a checkpoint's state: theta, the trees, the iterations done) and reports the state
// after each iteration to the observer, which may write it. Collective: every rank calls it
// with its slice.
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

TrainResult train_alternating_fits(LocalProblem& problem, const TrainConfig& config,
                                   Communicator& comm, TrainingObserver& observer,
                                   TrainingState start = {});

}  // namespace pdsp
