#pragma once
// The structured SVM at eps = 0 on binary pairwise data, solved through its dual over the local
// polytope (docs/eps_zero.md):
//
//   max over b_n in L_n of  D(b) = sum_n e_n . b_n - |z(b) - d|^2 / (2C),  theta(b) = (d - z) / C,
//
// by block-coordinate pairwise Frank-Wolfe: each example keeps its beliefs as a mixture of
// vertices of its local polytope; a step asks the exact LP oracle (binary_lp.hpp) for the
// example's best vertex at the current theta and moves weight to it from the mixture's worst
// vertex, by the exact maximiser of D along that line, then takes a few such steps inside the
// mixture alone. No temperature, no messages: after each pass F_0(theta) is evaluated exactly
// by the same oracle and F_0 - D is the certified gap. With P ranks each steps through its own
// examples in rounds of a few steps from the same theta as if alone; after each round the
// ranks' steps are combined by the exact line search on D from the round's start to their sum
// (one allreduce): D cannot fall, and no rank's theta lags by more than a round.
#include <cstdint>
#include <memory>

#include "pdsp/data/dataset.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

struct SsvmConfig {
  double C = 1.0;
  double loss_weight = 1.0;
  int max_passes = 1000;
  double tol = 1e-3;       // stop when F_0 - D <= tol * max(1, |F_0|)
  double max_seconds = 0;  // stop after this much training time (0: no limit)
  int seed = 1;            // of the first pass's shuffle and the later passes' draws
};

// Collective over the ranks of `comm`, each with its slice of whole examples (which must
// outlive it), of binary variables and pairwise factors (the learner's traits declare it, and
// the train command checks it). The constructor checks the labels, on every rank the lowest
// failing rank's error, and sets up the features and the labels' moments; run() trains.
class SsvmFrankWolfe {
 public:
  SsvmFrankWolfe(const Dataset& slice, const SsvmConfig& config, Communicator& comm);
  ~SsvmFrankWolfe();
  TrainResult run(TrainingObserver& observer);

 private:
  class Solver;
  std::unique_ptr<Solver> solver_;
};

// Both steps at once.
TrainResult train_ssvm_frank_wolfe(const Dataset& slice, const SsvmConfig& config,
                                   Communicator& comm, TrainingObserver& observer);

}  // namespace pdsp
