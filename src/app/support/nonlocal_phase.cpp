#include "pdsp/app/nonlocal_phase.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/psi_fit.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// psi in a few numbers: psi_u and psi_w where the dictionary has them, how many templates
// weigh and the largest weight.
std::string psi_summary(const std::vector<double>& psi, const NonlocalTerms& terms) {
  const int64_t J = terms.num_templates();
  std::string text;
  char part[96];
  if (J > 0) {
    const auto weighing =
        std::count_if(psi.begin(), psi.begin() + J, [](double w) { return w > 0; });
    std::snprintf(part, sizeof part, "%lld of %lld templates weigh (largest %.4g)",
                  static_cast<long long>(weighing), static_cast<long long>(J),
                  *std::max_element(psi.begin(), psi.begin() + J));
    text = part;
  }
  for (const auto& [on, name, weight] : {std::tuple{terms.unigram, "psi_u", psi[J]},
                                         std::tuple{terms.position, "psi_w", psi[J + 1]}})
    if (on) {
      std::snprintf(part, sizeof part, "%s%s %.4g", text.empty() ? "" : ", ", name, weight);
      text += part;
    }
  return text;
}

}  // namespace

NonlocalPhase::NonlocalPhase(const TrainConfig& config, const LearnerEntry& learner,
                             const Dataset& train_slice, const DatasetLayout& train_layout,
                             Communicator& comm) {
  const NonlocalTerms& terms = train_layout.nonlocal;
  // The same on every rank (the file's), but thrown collectively so that no rank aborts.
  run_collectively(comm, [&] {
    if (terms.num_states == 0 && !config.dev_data.empty())
      throw InputError("--dev-data " + config.dev_data + ": the training set " + config.data +
                       " has no non-local terms whose weights it could learn");
    // Else the dev set would go unread, and a wrong path unnoticed.
    if (config.psi_epochs == 0 && !config.dev_data.empty())
      throw InputError("--dev-data " + config.dev_data +
                       ": --psi-epochs 0 learns no non-local weights; drop one of the two");
    if (terms.num_states > 0 && config.psi_epochs > 0 && !learner.traits.nonlocal_terms)
      throw InputError("--learner " + config.learner + ": " + config.data +
                       " has non-local terms, whose weights are learned after the primal-dual "
                       "and domke learners only; use --psi-epochs 0 to leave them out");
  });
  if (terms.num_states == 0 || config.psi_epochs == 0) return;
  active_ = true;
  source_ = config.dev_data.empty() ? config.data : config.dev_data;
  if (config.dev_data.empty() && !train_slice.shard) {
    data_ = &train_slice;
    examples_ = train_layout.num_examples();
    return;
  }
  DatasetLayout layout;
  own_.emplace(load_rank_slice(source_, comm, &layout));
  data_ = &*own_;
  examples_ = layout.num_examples();
  run_collectively(comm, [&] {
    if (!layout.has_labels)
      throw InputError(source_ + ": /vars/label: learning the non-local weights needs labels");
    if (layout.num_params != train_layout.num_params)
      throw InputError(source_ + ": @num_params is " + std::to_string(layout.num_params) +
                       ", but the training set " + config.data + " has " +
                       std::to_string(train_layout.num_params));
    if (!layout.nonlocal.same_weights_as(terms))
      throw InputError(source_ + ": /nonlocal: its non-local terms (states, templates or " +
                       "dictionary) differ from those of the training set " + config.data);
  });
}

std::string NonlocalPhase::describe() const {
  if (!active_) return "";
  return "non-local weights: learned after theta on " + source_ + " (" + std::to_string(examples_) +
         " examples)";
}

Fields NonlocalPhase::fit(const TrainConfig& config, const std::vector<double>& theta,
                          const std::vector<StoredEnsemble>& trees, bool print,
                          Communicator& comm) {
  const NonlocalTerms& terms = data_->nonlocal;
  // Bethe-RDA's oracle as predict runs it: epsilon 1, the trained counting numbers, no loss.
  ProblemSettings settings;
  settings.epsilon = 1.0;
  settings.counting = config.counting;
  settings.loss_augmented = false;
  settings.shallow_trees_along = true;
  settings.source = source_;
  ModelChoice choice = config.model_choice();
  choice.stored_trees = trees;
  choice.trees_from_file = true;  // the trained model's: every ensemble the data needs
  choice.source = source_;
  choice.standardize_inputs = false;  // theta is the model file's
  std::unique_ptr<LocalProblem> problem;
  run_collectively(comm, [&] {
    problem =
        std::make_unique<LocalProblem>(*data_, settings, make_potential_model(*data_, choice));
    problem->keep_truth_moments();
  });
  PsiFitSettings fit_settings;
  fit_settings.epochs = config.psi_epochs;
  fit_settings.step = config.psi_step;
  fit_settings.rda.iterations = config.rda_iters;
  const bool root_prints = print && comm.is_root();
  const PsiFitResult result = fit_psi(
      *problem, terms, theta, std::vector<double>(static_cast<size_t>(terms.num_weights()), 0.0),
      fit_settings, [&](const PsiEpoch& epoch) {
        if (!root_prints) return;
        std::printf(
            "psi epoch %3d: -log Q %.6f per example, projected gradient %.3g, %d oracle "
            "calls, %.2f s; %s\n",
            epoch.epoch, epoch.loss, epoch.projected_gradient, epoch.oracle_calls, epoch.seconds,
            psi_summary(epoch.psi, terms).c_str());
        // As the iteration lines: a log followed with tail (a batch job's) shows each epoch.
        std::fflush(stdout);
      });
  psi_ = result.psi;
  if (root_prints)
    std::printf("non-local weights: %s; kept epoch %d (-log Q %.6f per example on %s): %s\n",
                result.stop.c_str(), result.best.epoch, result.best.loss, source_.c_str(),
                psi_summary(psi_, terms).c_str());
  return {{"psi_data", source_},
          {"psi_stop", result.stop},
          {"psi_converged", int64_t{result.converged}},
          {"psi_epochs_run", int64_t{result.epochs_run}},
          {"psi_best_epoch", int64_t{result.best.epoch}},
          {"psi_loss", result.best.loss}};
}

}  // namespace pdsp
