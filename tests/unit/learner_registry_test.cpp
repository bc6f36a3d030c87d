// The learner registry and the checks of a learner's traits that `pdsp train` runs before any
// data is read; typed stop reasons and their round trip through a checkpoint's text.
#include <gtest/gtest.h>

#include "pdsp/learners/learner.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// The one-line error of check_learner_settings, or "" when the settings pass.
std::string refusal(const std::string& learner, const TrainConfig& config,
                    bool checkpoints = false) {
  try {
    check_learner_settings(find_learner(learner), config, checkpoints);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(LearnerRegistry, FindsEveryLearnerByNameAndMakesIt) {
  const std::vector<std::string> names = learner_names();
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names.front(), "primal-dual") << "the default comes first";
  for (const std::string& name : names) {
    const LearnerEntry& entry = find_learner(name);
    EXPECT_EQ(entry.name, name);
    EXPECT_FALSE(entry.summary.empty()) << name;
    EXPECT_NE(entry.make(), nullptr) << name;
  }
}

TEST(LearnerRegistry, RefusesAnUnknownNameListingTheKnownOnes) {
  try {
    find_learner("gibbs-sgd");
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "--learner: gibbs-sgd is not one of primal-dual, ssvm-fw, lbp-sgd, lbp-lbfgs, "
                 "mf-sgd, mf-lbfgs, domke, dlpw, pegasos, latent");
  }
}

TEST(LearnerRegistry, ChecksEachLearnersTraitsInOneLine) {
  TrainConfig config;
  EXPECT_EQ(refusal("primal-dual", config, true), "");
  EXPECT_EQ(refusal("lbp-sgd", config), "");
  EXPECT_EQ(refusal("ssvm-fw", config),
            "--epsilon: --learner ssvm-fw solves the structured SVM (eps = 0)");
  EXPECT_EQ(refusal("lbp-lbfgs", config, true),
            "--learner lbp-lbfgs: checkpoints are for the primal-dual, domke, dlpw and latent "
            "learners");
  config.epsilon = 0;
  EXPECT_EQ(refusal("ssvm-fw", config), "");
  EXPECT_EQ(refusal("ssvm-fw", config, true),
            "--learner ssvm-fw: checkpoints are for the primal-dual, domke, dlpw and latent "
            "learners");
  config.p = 1.5;
  EXPECT_EQ(refusal("primal-dual", config), "");
  EXPECT_EQ(refusal("mf-sgd", config), "--p: --learner mf-sgd uses p = 2");
  config.p = 2;
  EXPECT_EQ(refusal("domke", config),
            "--epsilon: --learner domke fits at a positive temperature (--epsilon > 0; Domke uses "
            "0.1)");
  config.epsilon = 0.1;
  config.unary_model = "mlp";
  EXPECT_EQ(refusal("domke", config), "");
  config.epsilon = 0;
  EXPECT_EQ(refusal("ssvm-fw", config),
            "--unary-model mlp: nonlinear function classes are for the primal-dual and domke "
            "learners");
  EXPECT_EQ(refusal("primal-dual", config),
            "--unary-model mlp: nonlinear function classes train at --epsilon > 0");
  config.unary_model = "linear";
  config.pairwise_model = "trees";
  config.epsilon = 0.1;
  EXPECT_EQ(refusal("domke", config), "");
  EXPECT_EQ(refusal("primal-dual", config), "");
  config.pairwise_model = "linear";
  config.message_precision = "single";
  EXPECT_EQ(refusal("primal-dual", config), "");
  EXPECT_EQ(refusal("mf-lbfgs", config),
            "--message-precision: single applies to the primal-dual learner only");
}

TEST(StopReasons, DecideFinalityAndExitCodeByKind) {
  EXPECT_FALSE(no_stop().stops());
  for (const StopReason& stop :
       {stop_converged("converged: x"), stop_small_change("relative decrease"), stop_time_limit()})
    EXPECT_TRUE(stop.is_final()) << stop.text;
  for (const StopReason& stop : {stop_iteration_limit(), stop_signal(), stop_no_progress("x"),
                                 stop_by_observer("wall-time limit ahead")})
    EXPECT_FALSE(stop.is_final()) << stop.text;
  EXPECT_EQ(stop_signal().exit_code(), kExitInterrupted);
  EXPECT_EQ(stop_converged("converged").exit_code(), 0);
  EXPECT_EQ(stop_iteration_limit().exit_code(), 0);
}

// A checkpoint stores a final stop as its sentence: reading it back gives the same kind.
TEST(StopReasons, FinalStopsComeBackFromTheirText) {
  for (const StopReason& stop :
       {stop_converged("converged: primal-dual gap below tol"),
        stop_small_change("relative decrease of F below tol (not certified: x)"),
        stop_time_limit()})
    EXPECT_EQ(final_stop_from_text(stop.text), stop) << stop.text;
  EXPECT_FALSE(final_stop_from_text("").stops());
}

}  // namespace
}  // namespace pdsp
