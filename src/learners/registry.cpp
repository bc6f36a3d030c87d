#include <algorithm>

#include "pdsp/inference/binary_lp.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

// Each learner's file defines its entry.
LearnerEntry primal_dual_learner();
LearnerEntry ssvm_fw_learner();
LearnerEntry likelihood_learner(const std::string& name);
LearnerEntry domke_learner();
LearnerEntry dlpw_learner();
LearnerEntry pegasos_learner();
LearnerEntry latent_learner();

const std::vector<LearnerEntry>& learner_registry() {
  static const std::vector<LearnerEntry> learners = {
      primal_dual_learner(),
      ssvm_fw_learner(),
      likelihood_learner("lbp-sgd"),
      likelihood_learner("lbp-lbfgs"),
      likelihood_learner("mf-sgd"),
      likelihood_learner("mf-lbfgs"),
      domke_learner(),
      dlpw_learner(),
      pegasos_learner(),
      latent_learner(),
  };
  return learners;
}

namespace {

std::string joined(const std::vector<std::string>& names, const std::string& separator) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : separator) + name;
  return text;
}

// "the primal-dual learner", "the a and b learners": those whose traits allow something.
std::string learners_with(bool LearnerTraits::*allows) {
  std::vector<std::string> names;
  for (const LearnerEntry& entry : learner_registry())
    if (entry.traits.*allows) names.push_back(entry.name);
  const std::string last = names.back();
  names.pop_back();
  return "the " + (names.empty() ? last : joined(names, ", ") + " and " + last) +
         (names.empty() ? " learner" : " learners");
}

void require(bool ok, const std::string& flag, const std::string& rule) {
  if (!ok) throw InputError(flag + ": " + rule);
}

}  // namespace

std::vector<std::string> learner_names() {
  std::vector<std::string> names;
  for (const LearnerEntry& entry : learner_registry()) names.push_back(entry.name);
  return names;
}

const LearnerEntry& find_learner(const std::string& name) {
  const std::vector<LearnerEntry>& learners = learner_registry();
  const auto found = std::find_if(learners.begin(), learners.end(),
                                  [&](const LearnerEntry& entry) { return entry.name == name; });
  if (found == learners.end())
    throw InputError("--learner: " + name + " is not one of " + joined(learner_names(), ", "));
  return *found;
}

void check_learner_settings(const LearnerEntry& learner, const TrainConfig& config,
                            bool checkpoints) {
  const LearnerTraits& traits = learner.traits;
  const std::string which = "--learner " + learner.name;
  require(config.epsilon >= traits.epsilon_low && config.epsilon <= traits.epsilon_high,
          "--epsilon", which + " " + traits.epsilon_rule);
  require(traits.any_p || config.p == 2.0, "--p", which + " uses p = 2");
  require(traits.single_precision || config.message_precision != "single", "--message-precision",
          "single applies to " + learners_with(&LearnerTraits::single_precision) + " only");
  require(traits.checkpoints || !checkpoints, which,
          "checkpoints are for " + learners_with(&LearnerTraits::checkpoints));
  for (const auto& [flag, name] : {std::pair{"--unary-model", config.unary_model},
                                   std::pair{"--pairwise-model", config.pairwise_model}}) {
    if (name == "linear") continue;
    const std::string what = std::string(flag) + " " + name;
    require(
        traits.nonlinear_models, what,
        "nonlinear function classes are for " + learners_with(&LearnerTraits::nonlinear_models));
    // Without entropy the objective of a nonlinear model has no smooth dual to certify and no
    // temperature to lower (Trainer).
    require(config.epsilon > 0, what, "nonlinear function classes train at --epsilon > 0");
  }
}

void check_learner_data(const LearnerEntry& learner, const Dataset& slice, Communicator& comm) {
  run_collectively(comm, [&] {
    if (learner.traits.binary_pairwise_only)
      require_binary_pairwise(slice, "--learner " + learner.name);
    if (!learner.traits.unobserved_labels && slice.has_labels())
      for (int64_t v = 0; v < slice.owned_vars(); ++v)
        if (slice.label[v] < 0)
          throw InputError(
              slice.source() + ": /vars/label[" + std::to_string(slice.file_var(v)) +
              "] is -1 (unobserved): --learner " + learner.name + " needs every training label; " +
              learners_with(&LearnerTraits::unobserved_labels) + " learns with unobserved ones");
  });
}

}  // namespace pdsp
