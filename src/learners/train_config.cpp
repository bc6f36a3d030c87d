#include "pdsp/learners/train_config.hpp"

#include <algorithm>

#include "pdsp/learners/train_parameters.hpp"
#include "pdsp/optim/smoothing.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Whether `p`'s value in `config` obeys its rule.
bool obeys_rule(const TrainParameter& p, const TrainConfig& config) {
  const ParameterRule& rule = p.rule;
  if (!rule.words.empty()) {
    const std::string value = p.value_text(config);
    return std::find(rule.words.begin(), rule.words.end(), value) != rule.words.end();
  }
  if (rule.text(false).empty()) return true;
  if (const auto* m = std::get_if<double TrainConfig::*>(&p.member)) return rule.admits(config.**m);
  if (const auto* m = std::get_if<int TrainConfig::*>(&p.member)) return rule.admits(config.**m);
  return true;
}

// False for the rows of other learners than `learner`: the stochastic learners' steps, the seed
// of the learners that draw examples, the rounds of Domke's fits, and the latent learner's CCCP
// settings.
bool learner_row_applies(const std::string& name, const std::string& learner) {
  const bool stochastic = learner == "dlpw" || learner == "pegasos";
  if (name == "seed") return stochastic || learner == "ssvm-fw";
  if (name == "tree_rounds") return learner == "domke";
  if (name == "inner_sweeps" || name == "batch") return stochastic;
  if (name == "inner_iters" || name == "completion_epsilon") return learner == "latent";
  return true;
}

}  // namespace

void TrainConfig::validate() const {
  for (const TrainParameter& row : train_parameters())
    if (!obeys_rule(row, *this))
      throw InputError(row.flag + ": '" + row.value_text(*this) + "' is not " +
                       row.rule.text(row.is_whole()));
  // The completion at most as smooth as training: with a positive entropy a smax grows with its
  // temperature, so a hotter completion could push F = smax_eps[augmented] - smax[clamped]
  // below zero, where CCCP would chase the gap between two temperatures instead of the data.
  if (completion_epsilon > epsilon)
    throw InputError("--completion-epsilon: " + field_text(completion_epsilon) +
                     " is above --epsilon " + field_text(epsilon) +
                     ": the completion is at most as smooth as training");
  if (message_precision == "single" && kernels != "auto")
    throw InputError(
        "--message-precision: single needs --kernels auto (the general kernels keep double "
        "messages)");
}

Fields TrainConfig::fields() const {
  Fields fields;
  for (const TrainParameter& row : train_parameters())
    if (row.recorded) fields.emplace_back(row.name, row.value(*this));
  return fields;
}

bool TrainConfig::applies(const TrainParameter& row) const {
  // The L-BFGS settings change nothing for the gradient step, the smoothing nothing at eps > 0,
  // the networks' size nothing without a network (how they read their rows nothing without an
  // mlp), the fits' settings nothing but Domke's alternation, the trees' nothing without trees,
  // the CCCP steps' length nothing but the latent learner's. The seed also draws the rows a
  // subsampled tree round splits on.
  return (!row.name.starts_with("lbfgs_") || theta_step == "lbfgs") &&
         (row.name != "smoothing_start" || trains_by_smoothing(epsilon)) &&
         (row.name != "hidden" || has_network()) &&
         (row.name != "network_inputs" || has_network()) &&
         (!row.name.starts_with("fit_") || learner == "domke") &&
         (!row.name.starts_with("tree_") || grows_trees()) &&
         (learner_row_applies(row.name, learner) ||
          (row.name == "seed" && grows_trees() && tree_subsample < 1));  // draws the rows
}

std::vector<std::pair<std::string, std::string>> TrainConfig::trajectory_fields() const {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const TrainParameter& row : train_parameters())
    if (row.trajectory && applies(row)) kept.emplace_back(row.name, row.value_text(*this));
  return kept;
}

std::string TrainConfig::to_line() const {
  std::string line;
  for (const auto& [name, value] : fields())
    line += (line.empty() ? "" : " ") + name + "=" + field_text(value);
  return line;
}

}  // namespace pdsp
