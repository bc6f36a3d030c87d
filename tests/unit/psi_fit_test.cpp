// Learning the non-local weights psi with theta fixed (psi_fit.hpp) on small chains at eps = 1
// with Bethe numbers: each measurement is Bethe-RDA's label loss at the current weights (checked
// against enumeration in bethe_rda_test), each step AdaGrad's projected one, and the weights the
// labels call for grow while those they refuse stay at zero.
#include "pdsp/learning/psi_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

Dataset chains() {
  return testing::random_dataset({testing::chain_shape(3, 3), testing::chain_shape(4, 3)}, 6, 17);
}

ProblemSettings exact_inference() {
  ProblemSettings settings;
  settings.epsilon = 1.0;
  settings.counting = CountingMode::Bethe;
  settings.loss_augmented = false;
  return settings;
}

std::vector<PsiEpoch> fit(LocalProblem& problem, const NonlocalTerms& terms,
                          std::span<const double> theta, const std::vector<double>& psi,
                          const PsiFitSettings& settings, PsiFitResult& result) {
  std::vector<PsiEpoch> epochs;
  result = fit_psi(problem, terms, theta, psi, settings,
                   [&](const PsiEpoch& epoch) { epochs.push_back(epoch); });
  return epochs;
}

TEST(PsiFit, EachEpochMeasuresTheMeanLabelLossAndStepsEachWeightByAdaGrad) {
  const Dataset data = chains();
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 3);
  const NonlocalTerms terms = testing::three_state_terms(data, false);
  const std::vector<double> start = {0.2, 0.0, 0.4, 0.3, 0.1};
  PsiFitSettings settings;
  settings.epochs = 2;
  settings.step = 0.3;
  settings.rda.iterations = 20;
  LocalProblem problem(data, exact_inference());
  PsiFitResult result;
  const std::vector<PsiEpoch> epochs = fit(problem, terms, theta, start, settings, result);
  ASSERT_EQ(epochs.size(), 3u);

  // The first measurement, by Bethe-RDA itself: the mean over the two examples.
  BetheRda rda(problem, terms, start, settings.rda);
  EXPECT_EQ(epochs[0].oracle_calls, rda.run(theta));
  std::vector<double> gradient(start.size(), 0.0);
  const double loss = rda.label_loss(gradient) / 2;
  EXPECT_NEAR(epochs[0].loss, loss, 1e-12 * std::abs(loss));
  double projected = 0.0;
  for (size_t w = 0; w < start.size(); ++w) {
    gradient[w] /= 2;
    projected = std::max(projected, std::abs(start[w] - std::max(0.0, start[w] - gradient[w])));
    // AdaGrad's first step: the step size against the gradient's sign, then onto psi >= 0.
    const double expected = std::max(0.0, start[w] - std::copysign(0.3, gradient[w]));
    EXPECT_NEAR(epochs[1].psi[w], expected, 1e-15) << "weight " << w;
  }
  EXPECT_NEAR(epochs[0].projected_gradient, projected, 1e-12);
  EXPECT_EQ(epochs[0].psi, start);
  // The kept weights are those of the lowest loss measured.
  const auto lowest =
      std::min_element(epochs.begin(), epochs.end(),
                       [](const PsiEpoch& a, const PsiEpoch& b) { return a.loss < b.loss; });
  EXPECT_EQ(result.best.epoch, lowest->epoch);
  EXPECT_EQ(result.psi, lowest->psi);
  EXPECT_EQ(result.epochs_run, 2);
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.stop, "stopped after 2 epochs (--psi-epochs)");
}

// Every label is state 0. Template 0 asks for at least 2.5 zeros (the labels keep it, theta's
// marginals break it): its weight grows and the loss falls. Template 1 asks for at most 0.5
// zeros (the labels break it more than the marginals do): its gradient is positive at zero and
// the projection keeps it there.
TEST(PsiFit, TheWeightTheLabelsCallForGrowsAndTheOneTheyRefuseStaysAtZero) {
  Dataset data = chains();
  std::fill(data.label.begin(), data.label.end(), 0);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 4);
  NonlocalTerms terms;
  terms.num_states = 3;
  terms.count_a = {-1.0, 0.0, 0.0, 1.0, 0.0, 0.0};
  terms.count_b = {2.5, -0.5};
  terms.count_shape = {CountShape::SmoothedHinge, CountShape::SmoothedHinge};
  terms.count_offset = {0, 2, 4};
  terms.count_template = {0, 1, 0, 1};
  PsiFitSettings settings;
  settings.epochs = 20;
  LocalProblem problem(data, exact_inference());
  PsiFitResult result;
  const std::vector<PsiEpoch> epochs =
      fit(problem, terms, theta, std::vector<double>(4, 0.0), settings, result);
  for (const PsiEpoch& epoch : epochs)
    for (double weight : epoch.psi) EXPECT_GE(weight, 0.0);
  EXPECT_GT(result.psi[0], 1.0);
  EXPECT_EQ(result.psi[1], 0.0);
  EXPECT_LT(result.best.loss, 0.8 * epochs[0].loss);
  EXPECT_GT(result.best.epoch, 0);
}

}  // namespace
}  // namespace pdsp
