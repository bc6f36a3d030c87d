// The settings table of `pdsp train` (train_parameters.hpp): TrainConfig's checks, its recorded
// fields and the settings a checkpoint must match all follow the rows.
#include "pdsp/learners/train_parameters.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

std::string refusal(const TrainConfig& config) {
  try {
    config.validate();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(TrainParameters, EveryRowHasAFlagOfItsNameAndTheDefaultsPass) {
  std::set<std::string> flags;
  for (const TrainParameter& p : train_parameters()) {
    EXPECT_TRUE(flags.insert(p.flag).second) << p.flag << " twice";
    std::string expected = "--" + p.name;
    std::replace(expected.begin(), expected.end(), '_', '-');
    EXPECT_EQ(p.flag, expected) << p.name;
    EXPECT_FALSE(p.help.empty()) << p.flag;
  }
  EXPECT_EQ(refusal(TrainConfig{}), "");
}

TEST(TrainParameters, ValidateRefusesWhatEachRuleRefusesInOneLine) {
  TrainConfig config;
  config.epsilon = 1e-13;
  EXPECT_EQ(refusal(config), "--epsilon: '1e-13' is not 0 or a finite number >= 1e-12");
  config.epsilon = 0;
  EXPECT_EQ(refusal(config), "");
  config.sweeps = 0;
  EXPECT_EQ(refusal(config), "--sweeps: '0' is not a whole number >= 1");
  config.sweeps = 1;
  config.C = 0;
  EXPECT_EQ(refusal(config), "--C: '0' is not a finite number > 0");
  config.C = 1;
  config.tol = NAN;
  EXPECT_EQ(refusal(config), "--tol: 'nan' is not a finite number >= 0");
  config.tol = 1e-6;
  config.max_step_trials = 201;
  EXPECT_EQ(refusal(config), "--max-step-trials: '201' is not a whole number in [1, 200]");
  config.max_step_trials = 60;
  config.theta_step = "newton";
  EXPECT_EQ(refusal(config), "--theta-step: 'newton' is not one of lbfgs, gradient");
  config.theta_step = "lbfgs";
  config.learner = "adam";
  EXPECT_EQ(refusal(config),
            "--learner: 'adam' is not one of primal-dual, ssvm-fw, lbp-sgd, lbp-lbfgs, mf-sgd, "
            "mf-lbfgs, domke, dlpw, pegasos, latent");
  config.learner = "primal-dual";
  config.message_precision = "single";
  config.kernels = "general";
  EXPECT_EQ(refusal(config),
            "--message-precision: single needs --kernels auto (the general kernels keep double "
            "messages)");
}

TEST(TrainParameters, FieldsAreTheRecordedRowsInTheirOrder) {
  TrainConfig config;
  config.data = "d.h5";
  config.counting = CountingMode::Bethe;
  const Fields fields = config.fields();
  std::vector<std::string> recorded;
  for (const TrainParameter& p : train_parameters())
    if (p.recorded) recorded.push_back(p.name);
  ASSERT_EQ(fields.size(), recorded.size());
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(fields[i].first, recorded[i]);
  EXPECT_EQ(fields.front().second, FieldValue(std::string("d.h5")));
  EXPECT_EQ(config.to_line().rfind("data=d.h5 learner=primal-dual epsilon=1 ", 0), 0u)
      << config.to_line();
  EXPECT_NE(config.to_line().find(" counting=bethe "), std::string::npos);
  EXPECT_EQ(config.to_line().find("threads="), std::string::npos) << "not a model setting";
}

// A checkpoint resumes only with the same values of these; the L-BFGS settings count only for
// the L-BFGS step, the smoothing's start only at eps = 0, the networks' size only with a
// network or trees, how networks read their rows only with a network, the trees' settings only
// with trees.
TEST(TrainParameters, TrajectoryFieldsDependOnTheStepTheTemperatureAndTheClasses) {
  const auto names = [](const TrainConfig& config) {
    std::vector<std::string> out;
    for (const auto& [name, value] : config.trajectory_fields()) out.push_back(name);
    return out;
  };
  TrainConfig config;
  EXPECT_EQ(names(config),
            (std::vector<std::string>{"epsilon", "C", "p", "counting", "loss_weight", "unary_model",
                                      "pairwise_model", "sweeps", "max_step_trials", "theta_step",
                                      "lbfgs_memory", "lbfgs_curvature"}));
  config.epsilon = 0;
  config.theta_step = "gradient";
  EXPECT_EQ(names(config),
            (std::vector<std::string>{"epsilon", "smoothing_start", "C", "p", "counting",
                                      "loss_weight", "unary_model", "pairwise_model", "sweeps",
                                      "max_step_trials", "theta_step"}));
  config.epsilon = 0.5;
  config.pairwise_model = "mlp";
  EXPECT_EQ(names(config),
            (std::vector<std::string>{"epsilon", "C", "p", "counting", "loss_weight", "unary_model",
                                      "pairwise_model", "hidden", "network_inputs", "sweeps",
                                      "max_step_trials", "theta_step"}));
  config.pairwise_model = "trees";
  EXPECT_EQ(names(config),
            (std::vector<std::string>{"epsilon", "C", "p", "counting", "loss_weight", "unary_model",
                                      "pairwise_model", "sweeps", "max_step_trials", "theta_step",
                                      "tree_shrinkage", "tree_min_leaf", "tree_subsample"}));
  // The seed draws the rows of a subsampled round; the rounds per fit are Domke's alone.
  config.tree_subsample = 0.5;
  config.learner = "domke";
  EXPECT_EQ(names(config),
            (std::vector<std::string>{"epsilon", "C", "p", "counting", "loss_weight", "unary_model",
                                      "pairwise_model", "sweeps", "max_step_trials", "theta_step",
                                      "fit_sweeps", "fit_iters", "tree_rounds", "tree_shrinkage",
                                      "tree_min_leaf", "tree_subsample", "seed"}));
}

// --lbfgs-memory 0 (the default) keeps 10 pairs, 100 with a network of either kind; a number
// given is kept whatever the classes.
TEST(TrainParameters, TheLbfgsMemoryDefaultGrowsWithANetwork) {
  TrainConfig config;
  EXPECT_EQ(config.lbfgs_memory, 0);
  EXPECT_EQ(config.lbfgs_pairs(), 10);
  config.unary_model = "trees";
  EXPECT_EQ(config.lbfgs_pairs(), 10);
  config.pairwise_model = "mlp";
  EXPECT_EQ(config.lbfgs_pairs(), 100);
  config.pairwise_model = "linear";
  config.unary_model = "mlp";
  EXPECT_EQ(config.lbfgs_pairs(), 100);
  config.lbfgs_memory = 7;
  EXPECT_EQ(config.lbfgs_pairs(), 7);
  config.lbfgs_memory = -1;
  EXPECT_EQ(refusal(config), "--lbfgs-memory: '-1' is not a whole number in [0, 1000]");
}

}  // namespace
}  // namespace pdsp
