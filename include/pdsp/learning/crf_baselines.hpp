#pragma once
// The baselines of Hazan & Urtasun's Figure 2: conditional likelihood
//   L(theta) = sum_n [log Z_n(theta) - <d_n, theta>] + (C/2) |theta|^2
// with log Z and the marginals from approximate inference (loopy BP or mean field) run to
// convergence at every parameter value, minimised by SGD or by L-BFGS (LBFGS++ from Debian).
#include <string>

#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/learning/trainer.hpp"

namespace pdsp {

struct BaselineConfig {
  ApproximateInference inference = ApproximateInference::LoopyBp;
  bool lbfgs = true;  // false: SGD
  double C = 1.0;
  int max_iters = 100;  // L-BFGS iterations, or SGD epochs
  double tol = 1e-6;    // L-BFGS: relative gradient norm; SGD: relative change of L
  double step = 1.0;    // SGD: the step is step / (variables per example) / (1 + epoch)
  int inference_sweeps = 200;
  double inference_tol = 1e-8;
};

// Parses "lbp-sgd", "lbp-lbfgs", "mf-sgd" or "mf-lbfgs" into the two choices of the config.
void parse_baseline_learner(const std::string& name, BaselineConfig& config);

// Collective over the ranks of `comm`: each holds its slice in `crf`. The observer sees one
// record per L-BFGS iteration or SGD epoch (F is L(theta); D and the gap are not defined).
TrainResult train_crf_baseline(ApproximateCrf& crf, const BaselineConfig& config,
                               Communicator& comm, TrainingObserver& observer);

}  // namespace pdsp
