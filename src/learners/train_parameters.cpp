#include "pdsp/learners/train_parameters.hpp"

#include <cmath>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/util/counting_mode.hpp"

// The rows name only the members that differ from their defaults, by designated initializers;
// GCC 12 warns about the members they leave out (GCC 13 no longer does).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace pdsp {
namespace {

const char* const kFiles = kFilesGroup;
const char* const kModel = "Model";
const char* const kStop = "Optimisation and stopping";
const char* const kSpeed = kPerformanceGroup;
const char* const kBaselines = "Likelihood baselines (--learner)";
const char* const kFits = "Alternating fits (--learner domke)";
const char* const kNonlocal = "Non-local energies (data with non-local terms)";
const char* const kStochastic = "Stochastic steps (--learner dlpw, pegasos)";
const char* const kLatent = "Unobserved labels (--learner latent)";
const char* const kValidation = "Validation (--validation)";

ParameterRule at_least(double low) {
  return {.low = low};
}
ParameterRule above(double low) {
  return {.low = low, .low_open = true};
}
ParameterRule between(double low, double high) {
  return {.low = low, .high = high};
}
ParameterRule one_of(std::vector<std::string> words) {
  return {.words = std::move(words)};
}

// The --learner row: the registry's names, each with its summary in the help.
TrainParameter learner_row() {
  std::string help = "the learner:";
  for (const LearnerEntry& entry : learner_registry())
    help += "\n  " + entry.name + ": " + entry.summary;
  return {.name = "learner",
          .flag = "--learner",
          .group = kModel,
          .help = help,
          .member = &TrainConfig::learner,
          .rule = one_of(learner_names())};
}

std::vector<TrainParameter> make_table() {
  std::vector<std::string> counting_modes;
  for (CountingMode mode : kCountingModes) counting_modes.emplace_back(counting_mode_name(mode));
  return {
      {.name = "data",
       .flag = "--data",
       .group = kFiles,
       .help = "training data set (pdsp-dataset HDF5, with labels)",
       .member = &TrainConfig::data,
       .required = true},
      {.name = "out",
       .flag = "--out",
       .group = kFiles,
       .help = "model file to write (HDF5)",
       .member = &TrainConfig::out,
       .recorded = false,
       .required = true},
      {.name = "metrics",
       .flag = "--metrics",
       .group = kFiles,
       .help = "JSONL metrics file (first line: run metadata)",
       .member = &TrainConfig::metrics,
       .recorded = false},
      learner_row(),
      {.name = "epsilon",
       .flag = "--epsilon",
       .group = kModel,
       .help = "entropy temperature: 1 = CRF, 0 = structured SVM",
       .member = &TrainConfig::epsilon,
       .rule = {.low = kSmallestEpsilon, .or_zero = true},
       .trajectory = true},
      {.name = "smoothing_start",
       .flag = "--smoothing-start",
       .group = kModel,
       .help = "eps = 0: the temperature training starts at and lowers until the gap at eps = 0 "
               "is below tol",
       .member = &TrainConfig::smoothing_start,
       .rule = at_least(kSmallestEpsilon),
       .trajectory = true},
      {.name = "C",
       .flag = "--C",
       .group = kModel,
       .help = "regularisation weight",
       .member = &TrainConfig::C,
       .rule = above(0),
       .trajectory = true},
      {.name = "p",
       .flag = "--p",
       .group = kModel,
       .help = "the norm of the regulariser (C/p) |theta|_p^p (learners other than primal-dual: 2)",
       .member = &TrainConfig::p,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "counting",
       .flag = "--counting",
       .group = kModel,
       .help = "counting numbers (auto: Bethe's on examples without a cycle, else uniform; trw: "
               "tree-reweighted, from sampled spanning trees)",
       .member = &TrainConfig::counting,
       .rule = one_of(counting_modes),
       .trajectory = true},
      {.name = "loss_weight",
       .flag = "--loss-weight",
       .group = kModel,
       .help = "scale of the loss augmentation e_v(s) (Hamming, or the data's /vars/loss)",
       .member = &TrainConfig::loss_weight,
       .rule = at_least(0),
       .trajectory = true},
      {.name = "unary_model",
       .flag = "--unary-model",
       .group = kModel,
       .help = "function class of the typed variables' potentials (format 2): zero, constant, "
               "linear, trees (boosted regression trees) or mlp (a network per type on the "
               "observation row); classes other than linear at eps > 0",
       .member = &TrainConfig::unary_model,
       .rule = one_of(function_class_names()),
       .trajectory = true},
      {.name = "pairwise_model",
       .flag = "--pairwise-model",
       .group = kModel,
       .help = "function class of the typed factors' potentials (format 2), as --unary-model",
       .member = &TrainConfig::pairwise_model,
       .rule = one_of(function_class_names()),
       .trajectory = true},
      {.name = "hidden",
       .flag = "--hidden",
       .group = kModel,
       .help = "hidden units of each network (--unary-model or --pairwise-model mlp)",
       .member = &TrainConfig::hidden,
       .rule = between(1, 4096),
       .trajectory = true},
      {.name = "network_inputs",
       .flag = "--network-inputs",
       .group = kModel,
       .help = "how the networks read their observation rows in training: standardized (each "
               "column less its mean over the training rows, over its standard deviation; the "
               "model file holds the weights on the raw rows) or raw",
       .member = &TrainConfig::network_inputs,
       .rule = one_of({"standardized", "raw"}),
       .trajectory = true},
      {.name = "sweeps",
       .flag = "--sweeps",
       .group = kStop,
       .help = "message sweeps per outer iteration",
       .member = &TrainConfig::sweeps,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "max_iters",
       .flag = "--max-iters",
       .group = kStop,
       .help = "maximum outer iterations (baselines: L-BFGS iterations or SGD epochs; ssvm-fw: "
               "passes; dlpw, pegasos: epochs)",
       .member = &TrainConfig::max_iters,
       .rule = at_least(0)},
      {.name = "tol",
       .flag = "--tol",
       .group = kStop,
       .help =
           "stop when the relative decrease of F, or the certified gap, is below (0: on neither)",
       .member = &TrainConfig::tol,
       .rule = at_least(0)},
      {.name = "max_seconds",
       .flag = "--max-seconds",
       .group = kStop,
       .help = "stop after this wall time (0: no limit)",
       .member = &TrainConfig::max_seconds,
       .rule = at_least(0)},
      {.name = "step",
       .flag = "--step",
       .group = kStop,
       .help = "largest first step of a run's first Armijo search along the gradient, which "
               "starts at 2F/|g|^2 when that is smaller (SGD: step scale)",
       .member = &TrainConfig::initial_step,
       .rule = above(0)},
      {.name = "max_step_trials",
       .flag = "--max-step-trials",
       .group = kStop,
       .help = "objective evaluations per step search",
       .member = &TrainConfig::max_step_trials,
       .rule = between(1, 200),
       .trajectory = true},
      {.name = "theta_step",
       .flag = "--theta-step",
       .group = kStop,
       .help = "direction of the step on theta: lbfgs (quasi-Newton) or gradient",
       .member = &TrainConfig::theta_step,
       .rule = one_of({"lbfgs", "gradient"}),
       .trajectory = true},
      {.name = "lbfgs_memory",
       .flag = "--lbfgs-memory",
       .group = kStop,
       .help = "curvature pairs L-BFGS keeps (0: 10, or 100 with an mlp class)",
       .member = &TrainConfig::lbfgs_memory,
       .rule = between(0, 1000),
       .trajectory = true},
      {.name = "lbfgs_curvature",
       .flag = "--lbfgs-curvature",
       .group = kStop,
       .help = "L-BFGS's initial curvature: softmax (typed blocks' soft-max curvature by "
               "conjugate gradients), kronecker (their Kronecker model), auto (softmax where a "
               "block has more than 2 states, else kronecker) or identity",
       .member = &TrainConfig::lbfgs_curvature,
       .rule = one_of({"auto", "softmax", "kronecker", "identity"}),
       .trajectory = true},
      {.name = "threads",
       .flag = "--threads",
       .group = kSpeed,
       .help = "OpenMP threads per rank (0: OMP_NUM_THREADS, or OpenMP's default)",
       .member = &TrainConfig::threads,
       .rule = at_least(0),
       .recorded = false},
      {.name = "kernels",
       .flag = "--kernels",
       .group = kSpeed,
       .help = "auto (specialised kernels where they apply) or general (for comparisons)",
       .member = &TrainConfig::kernels,
       .rule = one_of({"auto", "general"})},
      {.name = "message_precision",
       .flag = "--message-precision",
       .group = kSpeed,
       .help = "single: float messages in the binary pairwise kernels (less memory traffic)",
       .member = &TrainConfig::message_precision,
       .rule = one_of({"double", "single"})},
      {.name = "inference_sweeps",
       .flag = "--inference-sweeps",
       .group = kBaselines,
       .help = "inference sweeps per evaluation",
       .member = &TrainConfig::inference_sweeps,
       .rule = at_least(1)},
      {.name = "inference_tol",
       .flag = "--inference-tol",
       .group = kBaselines,
       .help = "inference convergence tolerance",
       .member = &TrainConfig::inference_tol,
       .rule = at_least(0)},
      {.name = "fit_sweeps",
       .flag = "--fit-sweeps",
       .group = kFits,
       .help = "message sweeps after each function class's fit",
       .member = &TrainConfig::fit_sweeps,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "fit_iters",
       .flag = "--fit-iters",
       .group = kFits,
       .help = "L-BFGS iterations of each fit at fixed messages",
       .member = &TrainConfig::fit_iters,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "tree_rounds",
       .flag = "--tree-rounds",
       .group = kFits,
       .help = "boosting rounds of each trees fit of --learner domke (one tree per output and type "
               "each; the primal-dual learner grows one round per tree step)",
       .member = &TrainConfig::tree_rounds,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "tree_shrinkage",
       .flag = "--tree-shrinkage",
       .group = kFits,
       .help = "factor of each new tree's fitted leaf values (Domke's 0.25)",
       .member = &TrainConfig::tree_shrinkage,
       .rule = between(1e-6, 1),
       .trajectory = true},
      {.name = "tree_min_leaf",
       .flag = "--tree-min-leaf",
       .group = kFits,
       .help = "least fraction of a type's rows in each leaf of a tree (Domke's 0.05)",
       .member = &TrainConfig::tree_min_leaf,
       .rule = between(0, 0.5),
       .trajectory = true},
      {.name = "tree_subsample",
       .flag = "--tree-subsample",
       .group = kFits,
       .help = "fraction of a type's rows each round's trees split on, drawn afresh each round "
               "from --seed (stochastic gradient boosting; 1: every row)",
       .member = &TrainConfig::tree_subsample,
       .rule = between(1e-6, 1),
       .trajectory = true},
      {.name = "dev_data",
       .flag = "--dev-data",
       .group = kFiles,
       .help = "data set with the training set's non-local terms on which their weights psi are "
               "learned, theta fixed (default: the training set)",
       .member = &TrainConfig::dev_data},
      {.name = "rda_iters",
       .flag = "--rda-iters",
       .group = kNonlocal,
       .help = "Bethe-RDA iterations per example when learning psi (at most this + 1 marginal "
               "inference calls at epsilon 1)",
       .member = &TrainConfig::rda_iters,
       .rule = at_least(1)},
      {.name = "psi_epochs",
       .flag = "--psi-epochs",
       .group = kNonlocal,
       .help = "projected AdaGrad steps on psi after theta, each after a Bethe-RDA run on every "
               "example (0: no psi; predict then leaves the terms out)",
       .member = &TrainConfig::psi_epochs,
       .rule = at_least(0)},
      {.name = "psi_step",
       .flag = "--psi-step",
       .group = kNonlocal,
       .help = "AdaGrad step on psi: the first step moves each weight by this much",
       .member = &TrainConfig::psi_step,
       .rule = above(0)},
      {.name = "inner_sweeps",
       .flag = "--inner-sweeps",
       .group = kStochastic,
       .help = "dlpw: message sweeps of an example's own messages at each visit, before the step "
               "on theta (Meshi et al.'s R)",
       .member = &TrainConfig::inner_sweeps,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "batch",
       .flag = "--batch",
       .group = kStochastic,
       .help = "examples per step on theta, shared by the ranks (one allreduce per step)",
       .member = &TrainConfig::batch,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "seed",
       .flag = "--seed",
       .group = kStochastic,
       .help = "seed of the order the examples are visited in: a new permutation each epoch; "
               "also ssvm-fw's, which shuffles its first pass and then draws examples in "
               "proportion to their gaps; and the rows of --tree-subsample",
       .member = &TrainConfig::seed,
       .rule = at_least(0),
       .trajectory = true},
      {.name = "objective_every",
       .flag = "--objective-every",
       .group = kStochastic,
       .help = "epochs between evaluations of the full objective at the averaged theta, not "
               "counted in the training time (0: only after the last epoch)",
       .member = &TrainConfig::objective_every,
       .rule = at_least(0)},
      {.name = "inner_iters",
       .flag = "--inner-iters",
       .group = kLatent,
       .help = "latent: primal-dual iterations of the convex problem of each CCCP step (at most; "
               "--tol stops them sooner)",
       .member = &TrainConfig::inner_iters,
       .rule = at_least(1),
       .trajectory = true},
      {.name = "completion_epsilon",
       .flag = "--completion-epsilon",
       .group = kLatent,
       .help = "latent: temperature of the completion, the smax with the observed labels clamped "
               "(0: --epsilon / 10); lower makes the completed labels sharper, and F stays a "
               "difference of convex functions",
       .member = &TrainConfig::completion_epsilon,
       .rule = at_least(0),
       .trajectory = true},
      {.name = "validation",
       .flag = "--validation",
       .group = kFiles,
       .help = "labelled data set the model is checked on while it trains: the model written is "
               "the theta with the lowest validation error (any learner)",
       .member = &TrainConfig::validation},
      {.name = "validate_every",
       .flag = "--validate-every",
       .group = kValidation,
       .help = "iterations between checks on --validation (and after the last)",
       .member = &TrainConfig::validate_every,
       .rule = at_least(1)},
      {.name = "patience",
       .flag = "--patience",
       .group = kValidation,
       .help = "stop after this many checks on --validation without a lower error (0: never)",
       .member = &TrainConfig::patience,
       .rule = at_least(0)},
  };
}

}  // namespace

std::string ParameterRule::text(bool whole) const {
  if (!words.empty()) {
    std::string list;
    for (const std::string& word : words) list += (list.empty() ? "" : ", ") + word;
    return "one of " + list;
  }
  if (std::isinf(low) && std::isinf(high)) return "";
  const std::string kind = whole ? "a whole number" : "a finite number";
  const std::string bound = std::isinf(high)
                                ? (low_open ? " > " : " >= ") + field_text(low)
                                : " in [" + field_text(low) + ", " + field_text(high) + "]";
  return (or_zero ? "0 or " : "") + kind + bound;
}

bool ParameterRule::admits(double value) const {
  if (!std::isfinite(value)) return false;
  if (or_zero && value == 0) return true;
  return (low_open ? value > low : value >= low) && value <= high;
}

FieldValue TrainParameter::value(const TrainConfig& config) const {
  return std::visit(
      [&](auto TrainConfig::*m) -> FieldValue {
        const auto& v = config.*m;
        using Value = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<Value, CountingMode>)
          return counting_mode_name(v);
        else if constexpr (std::is_same_v<Value, int>)
          return int64_t{v};
        else
          return v;
      },
      member);
}

const std::vector<TrainParameter>& train_parameters() {
  static const std::vector<TrainParameter> table = make_table();
  return table;
}

}  // namespace pdsp
