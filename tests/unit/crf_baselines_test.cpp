// The likelihood baselines against brute force: on a factor tree loopy BP is exact, so the
// baseline's log Z, marginals and trained theta must equal the exact CRF's; mean field is exact
// on a graph without factors; and every learner decreases the likelihood.
#include "pdsp/learning/crf_baselines.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/brute_force.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;
using testing::Recorder;

Dataset tree_data() {
  return testing::random_dataset(
      {testing::tree_shape(), testing::tree_shape(), testing::chain_shape(4)}, 5, 23);
}

TEST(ApproximateCrf, LoopyBpIsExactOnATree) {
  const Dataset data = tree_data();
  ApproximateCrf crf(data, ApproximateInference::LoopyBp, 100, 1e-13);
  const std::vector<double> theta = {0.3, -0.8, 1.1, 0.4, -0.2};
  crf.set_theta(theta);
  const double log_z = crf.infer_all();
  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 1.0, 0.0, 1.0, 2.0);
  EXPECT_NEAR(log_z, exact.smax_sum, 1e-9 * std::abs(exact.smax_sum));
  EXPECT_LT(max_abs_difference(crf.beliefs(), exact.marginals), 1e-9);
}

TEST(ApproximateCrf, MeanFieldIsExactWithoutFactors) {
  testing::GraphShape independent;
  independent.cards = {2, 3, 4};
  const Dataset data = testing::random_dataset({independent, independent}, 4, 8);
  ApproximateCrf crf(data, ApproximateInference::MeanField, 100, 1e-13);
  const std::vector<double> theta = {0.7, -1.2, 0.5, 2.0};
  crf.set_theta(theta);
  const double log_z = crf.infer_all();
  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 1.0, 0.0, 1.0, 2.0);
  EXPECT_NEAR(log_z, exact.smax_sum, 1e-12 * std::abs(exact.smax_sum));
  EXPECT_LT(max_abs_difference(crf.beliefs(), exact.marginals), 1e-12);
}

TEST(ApproximateCrf, MeanFieldLowerBoundsLogZOnALoopyGraph) {
  const Dataset data = testing::random_dataset({testing::loopy_shape()}, 5, 4);
  ApproximateCrf crf(data, ApproximateInference::MeanField, 500, 1e-12);
  const std::vector<double> theta = {0.3, -0.8, 1.1, 0.4, -0.2};
  crf.set_theta(theta);
  EXPECT_LE(crf.infer_all(), testing::solve_exactly(data, theta, 1.0, 0.0, 1.0, 2.0).smax_sum);
}

TEST(CrfBaselines, LbpLbfgsReachesTheExactCrfOptimumOnATree) {
  const Dataset data = tree_data();
  ApproximateCrf crf(data, ApproximateInference::LoopyBp, 100, 1e-13);
  BaselineConfig config;
  parse_baseline_learner("lbp-lbfgs", config);
  config.max_iters = 200;
  config.tol = 1e-10;
  SerialCommunicator serial;
  Recorder recorder;
  const TrainResult result = train_crf_baseline(crf, config, serial, recorder);
  const std::vector<double> optimum = testing::exact_optimum(data, 1.0, 0.0, 1.0, 2.0);
  EXPECT_LT(max_abs_difference(result.state.theta, optimum), 1e-6) << result.stop_reason;
}

TEST(CrfBaselines, EveryLearnerDecreasesTheLikelihood) {
  const Dataset data =
      testing::random_dataset({testing::loopy_shape(), testing::loopy_shape()}, 5, 9);
  for (const char* learner : {"lbp-sgd", "lbp-lbfgs", "mf-sgd", "mf-lbfgs"}) {
    BaselineConfig config;
    parse_baseline_learner(learner, config);
    config.max_iters = 20;
    ApproximateCrf crf(data, config.inference, 200, 1e-10);
    SerialCommunicator serial;
    Recorder recorder;
    train_crf_baseline(crf, config, serial, recorder);
    ASSERT_GE(recorder.records.size(), 2u) << learner;
    EXPECT_LT(recorder.records.back().objective, recorder.records.front().objective) << learner;
  }
}

TEST(CrfBaselines, UnknownLearnerNamesAreRefused) {
  BaselineConfig config;
  EXPECT_THROW(parse_baseline_learner("lbp-adam", config), InputError);
  EXPECT_THROW(parse_baseline_learner("gibbs-sgd", config), InputError);
}

}  // namespace
}  // namespace pdsp
