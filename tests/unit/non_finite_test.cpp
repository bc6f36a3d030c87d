// Values that are not finite never become NaN marginals: potentials, messages or beliefs that
// overflow stop evaluate() with one line that names the data, the variable or factor and the
// parameter, while a large theta whose beliefs stay finite, and an overflowing trial step of
// training, are no error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/inference/smax.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/errors.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::error_of;

// A chain of three binary variables: variable 0 state 1 carries parameter 0 with value `value`,
// both factors carry parameter 1 with value 1 on their agreeing states and -1 on the others.
Dataset chain(double value) {
  DatasetBuilder builder(2);
  builder.begin_example();
  const int64_t a = builder.add_variable(2, 0, {{}, {{0, value}}});
  const int64_t b = builder.add_variable(2, 1);
  const int64_t c = builder.add_variable(2, 0);
  const std::vector<FeatureRow> agree = {{{1, 1.0}}, {{1, -1.0}}, {{1, -1.0}}, {{1, 1.0}}};
  builder.add_factor({a, b}, agree);
  builder.add_factor({b, c}, agree);
  return builder.finish();
}

const ProblemSettings kPrediction{1.0, CountingMode::Uniform, 0.0, false, "chain.h5"};

std::string prediction_error(const Dataset& data, const std::vector<double>& theta) {
  LocalProblem problem(data, kPrediction);
  problem.set_theta(theta);
  return error_of([&] {
    problem.sweep(5);
    problem.evaluate();
  });
}

TEST(NonFinite, APotentialThatOverflowsNamesTheVariableTheParameterAndTheFeature) {
  EXPECT_EQ(prediction_error(chain(1e300), {1e10, 0.0}),
            "chain.h5: the potential of variable 0 state 1 is inf (its largest term is theta[0] "
            "= 1e+10 times /vars/feat_value[0] = 1e+300)");
}

TEST(NonFinite, ATypedTermThatOverflowsNamesTheParameterAndTheObservation) {
  // The chain with its variables in format 2: variable 0 reads observation row 0, whose second
  // entry (position 1, value `3`) meets parameter 2 + 1 * 2 + 1 = 5 in state 1.
  Dataset data = chain(1.0);
  data.obs_offset = {0, 1};
  data.observations.ptr = {0, 2};
  data.observations.index = {0, 1};
  data.observations.value = {0.5, 3.0};
  data.var_types = {true, {2}, {2}, {0, -1, -1}, {0, -1, -1}};
  data.num_params = 6;
  EXPECT_EQ(prediction_error(data, {0.0, 0.0, 0.0, 0.0, 0.0, 1e308}),
            "chain.h5: the potential of variable 0 state 1 is inf (its largest term is theta[5] "
            "= 1e+308 times /obs/value[1] = 3)");
}

TEST(NonFinite, MessagesThatOverflowNameTheEdgeAndTheLargestPotential) {
  const std::string message = prediction_error(chain(1.0), {0.0, 1e308});
  EXPECT_EQ(message.rfind("chain.h5: the message between factor ", 0), 0u) << message;
  EXPECT_NE(message.find("too large for double precision at epsilon = 1; the largest: the "
                         "potential of factor 0 joint state 0 is 1e+308 (its largest term is "
                         "theta[1] = 1e+308 times /factors/feat_value[0] = 1)"),
            std::string::npos)
      << message;
}

TEST(NonFinite, ALargeThetaWhoseBeliefsStayFiniteIsNoError) {
  const Dataset data = chain(1.0);
  LocalProblem problem(data, kPrediction);
  problem.set_theta(std::vector<double>{1e308, 0.0});
  problem.sweep(5);
  EXPECT_NO_THROW(problem.evaluate());
  EXPECT_EQ(problem.beliefs()[1], 1.0);  // variable 0 in state 1
}

// The step search tries steps that may overflow and rejects them on F: no error there, and
// none once theta is back to a finite one.
TEST(NonFinite, AnOverflowingTrialIsNoErrorOnceThetaIsFiniteAgain) {
  const Dataset data = chain(1e300);
  LocalProblem problem(data, {1.0, CountingMode::Uniform, 1.0, true, "chain.h5"});
  problem.set_theta(std::vector<double>{1e10, 0.0});
  EXPECT_FALSE(std::isfinite(problem.objective()));
  problem.set_theta(std::vector<double>{0.0, 0.5});
  problem.sweep(1);
  EXPECT_NO_THROW(problem.evaluate());
}

// A message that is not finite, here imported as from a checkpoint, is named.
TEST(NonFinite, AnInfiniteMessageIsNamed) {
  const Dataset data = chain(1.0);
  LocalProblem problem(data, kPrediction);
  problem.set_theta(std::vector<double>{0.5, 0.5});
  std::vector<double> arena = problem.messages();
  arena[0] = -INFINITY;
  problem.set_messages(arena);
  const std::string message = error_of([&] { problem.evaluate(); });
  EXPECT_EQ(message.rfind("chain.h5: the message between factor 0 and variable 0 is ", 0), 0u)
      << message;
}

// With a negative counting number (the middle variable's, under Bethe) a message of -inf only
// gives its variable's state belief 0: every belief stays finite, and the message must still be
// found.
TEST(NonFinite, AnInfiniteMessageIsFoundWhereEveryBeliefIsFinite) {
  const Dataset data = chain(1.0);
  LocalProblem problem(data, {1.0, CountingMode::Bethe, 0.0, false, "chain.h5"});
  problem.set_theta(std::vector<double>{0.5, 0.5});
  std::vector<double> arena = problem.messages();
  arena[2] = -INFINITY;  // factor 0's message from variable 1
  problem.set_messages(arena);
  const std::string message = error_of([&] { problem.evaluate(); });
  EXPECT_EQ(message,
            "chain.h5: the message between factor 0 and variable 1 is -inf after the sweeps");
}

// At eps = 0 a region's smax is a max, which could pass over a NaN message: it must not.
TEST(NonFinite, MessagesThatOverflowAtEpsilonZeroAreFoundToo) {
  const Dataset data = chain(1.0);
  LocalProblem problem(data, {0.0, CountingMode::Uniform, 0.0, false, "chain.h5"});
  problem.set_theta(std::vector<double>{0.0, 1e308});
  const std::string message = error_of([&] {
    problem.sweep(5);
    problem.evaluate();
  });
  EXPECT_EQ(message.rfind("chain.h5: the message between factor ", 0), 0u) << message;
}

TEST(NonFinite, TheMaximumOfScoresWithANanIsNan) {
  const double first[] = {NAN, 1.0, 2.0};
  const double middle[] = {1.0, NAN, 2.0};
  EXPECT_TRUE(std::isnan(max_of(first, 3)));
  EXPECT_TRUE(std::isnan(max_of(middle, 3)));
  const double finite[] = {1.0, 3.0, 2.0};
  EXPECT_EQ(max_of(finite, 3), 3.0);
}

}  // namespace
}  // namespace pdsp
