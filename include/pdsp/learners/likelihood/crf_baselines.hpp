#pragma once
// The baselines of Hazan & Urtasun's Figure 2: conditional likelihood
//   L(theta) = sum_n [log Z_n(theta) - <d_n, theta>] + (C/2) |theta|^2,
// minimised as L / V (V the variables of the data set, so that tolerances mean the same at every
// size), with log Z and the marginals from approximate inference (loopy BP or mean field) run to
// a tolerance at every parameter value, each evaluation warm-started from the messages of the
// last accepted iterate. SGD, or L-BFGS with pdsp's curvature memory and a strong Wolfe line
// search that rejects every evaluation whose inference did not converge and keeps only
// accepted points (Debian's LBFGS++ 0.1 keeps pairs without positive curvature and ends a
// failed search at its last trial).
#include <string>

#include "pdsp/learners/likelihood/likelihood.hpp"
#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/learning/training_state.hpp"

namespace pdsp {

struct BaselineConfig {
  ApproximateInference inference = ApproximateInference::LoopyBp;
  bool lbfgs = true;  // false: SGD
  double C = 1.0;
  int max_iters = 100;  // L-BFGS iterations, or SGD epochs
  double tol = 1e-6;    // L-BFGS: gradient norm of L / V relative to max(1, |theta|), or a
                        // decrease of L / V below tol * max(1, |L / V|); SGD: relative change
  double step = 1.0;    // SGD: the step is step / (variables per example) / epoch (from 1)
  int inference_sweeps = 200;
  double inference_tol = 1e-8;
};

// L-BFGS's rule for when the slow starts run: the line search's trials start from the accepted
// iterate's state and from one start pulled towards each state (Likelihood::Starts::Trial); its
// accepted step is then evaluated with every start (Likelihood::Starts::All) and kept if that
// evaluation `all_starts` is valid and still decreases L / V enough from `start_value` along a
// direction of slope `slope` (L <= start_value + c1 step slope); otherwise the search is repeated
// with every start at every trial.
bool trial_step_holds(const Evaluation& all_starts, double start_value, double step, double slope);

// Parses "lbp-sgd", "lbp-lbfgs", "mf-sgd" or "mf-lbfgs" into the two choices of the config.
void parse_baseline_learner(const std::string& name, BaselineConfig& config);

// Collective over the ranks of `comm`: each holds its slice in `crf`. The observer sees one
// record per L-BFGS iteration or SGD epoch (the objective is L(theta) / V; D and the gap are not
// defined), with the unconverged and negative-NLL examples.
TrainResult train_crf_baseline(ApproximateCrf& crf, const BaselineConfig& config,
                               Communicator& comm, TrainingObserver& observer);

}  // namespace pdsp
