#pragma once
// Learning the weights psi of the non-local energies with theta held fixed (Vilnis et al.,
// AISTATS 2015, section 7, Algorithm 3, with the batch of all the given examples): each epoch
// runs Bethe-RDA (bethe_rda.hpp) on every example at the current psi and takes one projected
// step down the mean negative log-likelihood of the labels under the potentials of its last
// oracle call, -log Q(y), whose gradient BetheRda::label_loss gives with the averaged slopes held
// fixed. The step is AdaGrad's (each weight's step divided by the root of its squared gradients
// so far: the weights differ in scale by the size of their terms), then the projection onto
// psi >= 0, which also drops the terms that would make the energy concave (the paper ignores
// negative weights). The weights kept are those of the epoch with the lowest loss.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/nonlocal_terms.hpp"
#include "pdsp/learning/bethe_rda.hpp"
#include "pdsp/learning/local_problem.hpp"

namespace pdsp {

struct PsiFitSettings {
  int epochs = 50;          // projected steps; the loss is measured epochs + 1 times
  double step = 2.0;        // AdaGrad's step: the first moves each weight by this much
  double tolerance = 1e-6;  // converged: no weight's projected gradient above this
  RdaSettings rda;
};

// One measurement: the loss at `psi` (before that epoch's step).
struct PsiEpoch {
  int epoch = 0;  // 0: at the starting weights
  double loss = 0;
  double projected_gradient = 0;  // largest |psi_w - max(0, psi_w - g_w)| over the weights
  int oracle_calls = 0;           // per example (the examples run Bethe-RDA in lock-step)
  double seconds = 0;
  std::vector<double> psi;
};

struct PsiFitResult {
  std::vector<double> psi;  // the kept weights: the lowest loss measured
  PsiEpoch best;
  int epochs_run = 0;
  bool converged = false;
  std::string stop;  // why the fit ended, in words
};

// `problem`: no loss augmentation, epsilon 1 (where log Q's normaliser is the oracle's
// objective); the examples with labels. Collective over the problem's ranks: every rank gets the
// same weights. `report` sees each measurement, on every rank.
PsiFitResult fit_psi(LocalProblem& problem, const NonlocalTerms& terms,
                     std::span<const double> theta, std::vector<double> psi,
                     const PsiFitSettings& settings,
                     const std::function<void(const PsiEpoch&)>& report);

}  // namespace pdsp
