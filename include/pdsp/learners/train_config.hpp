#pragma once
// Every hyper-parameter of a training run: one struct, printable as one line, stored as
// attributes in the model file and as the first line of the metrics file. The member
// initialisers are the defaults; each member's flag, help, rule and names are its row in
// train_parameters.cpp.
#include <string>
#include <utility>
#include <vector>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/util/field.hpp"
#include "pdsp/util/temperature.hpp"

namespace pdsp {

struct TrainParameter;  // train_parameters.hpp

struct TrainConfig {
  std::string data;
  std::string out;
  std::string metrics;
  double epsilon = 1.0;
  // At eps = 0 (where F is not smooth) training runs at a positive temperature that starts here
  // and is lowered until the primal-dual gap of the eps = 0 problem is below tol
  // (docs/eps_zero.md).
  double smoothing_start = 1.0;
  double C = 1.0;
  double p = 2.0;
  CountingMode counting = CountingMode::Auto;
  double loss_weight = 1.0;
  // The function classes of the variables' and the factors' typed regions
  // (features/potential_models.hpp), the hidden units of a network and how it reads its rows.
  std::string unary_model = "linear";
  std::string pairwise_model = "linear";
  int hidden = 16;
  std::string network_inputs = "standardized";
  int sweeps = 1;
  int max_iters = 200;
  double tol = 1e-6;
  double max_seconds = 0.0;  // 0: no limit
  double initial_step = 1.0;
  int max_step_trials = 60;
  // The direction of the step on theta: "lbfgs" (quasi-Newton from the last `lbfgs_memory`
  // pairs of steps and gradient changes) or "gradient" (steepest descent).
  std::string theta_step = "lbfgs";
  int lbfgs_memory = 0;  // 0: lbfgs_pairs() picks
  // Pairs L-BFGS keeps: lbfgs_memory when set, else 10, or 100 where a kind is a network: with no
  // curvature model a network's L-BFGS starts from a multiple of the identity, and more pairs
  // carry more of its shape (horses, mlp/mlp at 300 iterations: F 4,571 with 10, 4,331 with 50,
  // 4,283 with 100 or 200; test error 9.08%, 8.70%, 8.60%; docs/benchmarks.md).
  int lbfgs_pairs() const {
    if (lbfgs_memory > 0) return lbfgs_memory;
    return has_network() ? 100 : 10;
  }
  // Whether either kind's function class is a network (mlp).
  bool has_network() const { return unary_model == "mlp" || pairwise_model == "mlp"; }
  // H_0 of L-BFGS (KroneckerCurvature): "softmax" (the soft-max curvature of typed variable
  // blocks by conjugate gradients), "kronecker" (its Kronecker model), "auto" (softmax where a
  // block has more than two states, else kronecker; all three a diagonal elsewhere) or
  // "identity" (a multiple of the identity).
  std::string lbfgs_curvature = "auto";
  int threads = 0;  // 0: OpenMP's default
  // "auto": the specialised kernels where they apply; "general": always the general ones. Both
  // compute the same values up to round-off.
  std::string kernels = "auto";
  // "double", or "single": the binary pairwise kernels keep their messages in float (half their
  // memory traffic; F and the beliefs agree with double to about 1e-9 and 1e-7).
  std::string message_precision = "double";
  // The learner's name in learners/registry.cpp (which also checks the settings it refuses).
  std::string learner = "primal-dual";
  int inference_sweeps = 200;  // baselines: sweeps of approximate inference per evaluation
  int fit_sweeps = 25;         // domke: message sweeps after each fit (Domke's 25)
  int fit_iters = 100;         // domke: L-BFGS iterations of each fit at fixed messages
  int tree_rounds = 1;         // domke: boosting rounds of each trees fit
  double tree_shrinkage = 0.25;
  double tree_min_leaf = 0.05;
  double tree_subsample = 1.0;
  double inference_tol = 1e-8;
  // Non-local energies (learning/psi_fit.hpp): the data set psi is learned on after theta (empty:
  // the training set), Bethe-RDA's iterations per example, the projected steps on psi (0: the
  // model gets no psi) and their size.
  std::string dev_data;
  int rda_iters = 10;
  int psi_epochs = 50;
  double psi_step = 2.0;
  // The stochastic learners (learners/stochastic): dlpw's sweeps per visit, the examples per
  // step, the seed of the visiting order, the epochs between objective evaluations.
  int inner_sweeps = 10;
  int batch = 1;
  int seed = 1;
  int objective_every = 1;
  // The latent learner (learners/latent): primal-dual iterations of each CCCP step, and the
  // temperature of the completion (the smax with the observed labels clamped; 0: epsilon / 10,
  // which beat epsilon itself on horses and denoising: docs/benchmarks.md).
  int inner_iters = 100;
  double completion_epsilon = 0.0;
  double resolved_completion_epsilon() const {
    return completion_epsilon > 0 ? completion_epsilon : epsilon / 10;
  }
  // A validation set (app/validation.hpp; empty: none), the iterations between its checks and
  // the checks without improvement after which training stops (0: never).
  std::string validation;
  int validate_every = 1;
  int patience = 0;

  // Throws InputError naming the flag of a value its row's rule refuses (the learner's own
  // restrictions are check_learner_settings').
  void validate() const;
  // (name, typed value) pairs of the recorded rows, in the table's order: the one source for the
  // log line, the metrics header and the model attributes.
  Fields fields() const;
  std::string to_line() const;
  // The function classes and network size of the potentials (make_potential_model).
  ModelChoice model_choice() const {
    ModelChoice choice;
    choice.unary = unary_model;
    choice.pairwise = pairwise_model;
    choice.hidden = hidden;
    choice.trees = {tree_shrinkage, tree_min_leaf, tree_subsample, seed};
    choice.source = data;
    choice.standardize_inputs = network_inputs == "standardized";
    return choice;
  }
  bool grows_trees() const { return unary_model == "trees" || pairwise_model == "trees"; }
  // Whether `row` of the parameter table can change this run (e.g. --hidden only with an mlp).
  bool applies(const TrainParameter& row) const;
  // The fields that change the training trajectory: a checkpoint resumes only with the same.
  std::vector<std::pair<std::string, std::string>> trajectory_fields() const;
};

}  // namespace pdsp
