// The strong Wolfe line search of the likelihood baselines on one-dimensional functions: it
// meets both conditions where it can, backs off from evaluations that are not valid, returns the
// best accepted point when the curvature condition is never met, and step 0 when nothing
// decreases.
#include "pdsp/optim/wolfe_line_search.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace pdsp {
namespace {

// phi(a) = (a - 3)^2 - 9: phi(0) = 0, phi'(0) = -6, minimum at 3.
LinePoint parabola(double a) {
  return {a, (a - 3) * (a - 3) - 9, 2 * (a - 3), true};
}

TEST(WolfeLineSearch, MeetsBothConditionsOnAParabola) {
  const WolfeSettings settings;
  for (double initial : {0.01, 1.0, 3.0, 50.0}) {
    const WolfeResult r = strong_wolfe_search(parabola, parabola(0), initial, settings);
    ASSERT_TRUE(r.strong_wolfe) << initial;
    EXPECT_TRUE(r.decreased);
    EXPECT_LE(r.best.value, 0 + settings.sufficient_decrease * r.best.step * -6) << initial;
    EXPECT_LE(std::abs(r.best.slope), settings.curvature * 6) << initial;
    EXPECT_LE(r.trials, settings.max_trials);
  }
}

TEST(WolfeLineSearch, BacksOffFromInvalidEvaluations) {
  int invalid_calls = 0;
  // Beyond 2 the evaluation fails (inference that did not converge).
  auto phi = [&](double a) {
    LinePoint p = parabola(a);
    if (a > 2) {
      p.valid = false;
      ++invalid_calls;
    }
    return p;
  };
  const WolfeResult r = strong_wolfe_search(phi, parabola(0), 8.0);
  ASSERT_TRUE(r.decreased);
  EXPECT_LE(r.best.step, 2.0);
  EXPECT_TRUE(r.best.valid);
  EXPECT_EQ(r.invalid_trials, invalid_calls);
  EXPECT_GE(r.invalid_trials, 1);
}

TEST(WolfeLineSearch, ReturnsTheBestAcceptedPointWhenCurvatureIsNeverMet) {
  // phi(a) = -a: every step decreases it, the slope never flattens; the search doubles the step
  // until its trials run out and keeps the lowest point, not the last one tried.
  WolfeSettings settings;
  settings.max_trials = 5;
  int calls = 0;
  auto phi = [&](double a) {
    ++calls;
    // The fifth trial fails, so the last evaluated point is not the best one.
    return LinePoint{a, -a, -1, calls < 5};
  };
  const WolfeResult r = strong_wolfe_search(phi, LinePoint{0, 0, -1, true}, 1.0, settings);
  EXPECT_TRUE(r.decreased);
  EXPECT_FALSE(r.strong_wolfe);
  EXPECT_EQ(r.trials, 5);
  EXPECT_DOUBLE_EQ(r.best.step, 8.0);  // trials 1, 2, 4, 8 valid; the fifth, 16, not
  EXPECT_DOUBLE_EQ(r.best.value, -8.0);
}

// phi falls along a line until a jump at a = 2.1 (another fixed point of approximate inference
// takes over), where no point meets the curvature condition: the zoom bisects towards the jump
// and stops once the bracket is narrower than bracket_tol of the best step.
TEST(WolfeLineSearch, StopsZoomingTowardsAJumpOnceTheBracketIsNarrow) {
  auto phi = [](double a) { return LinePoint{a, a < 2.1 ? -a : 10.0, -1.0, true}; };
  WolfeSettings settings;
  const WolfeResult endless = strong_wolfe_search(phi, phi(0), 1.0, settings);
  EXPECT_EQ(endless.trials, settings.max_trials);  // every trial spent creeping
  settings.bracket_tol = 0.01;
  const WolfeResult r = strong_wolfe_search(phi, phi(0), 1.0, settings);
  ASSERT_TRUE(r.decreased);
  EXPECT_FALSE(r.strong_wolfe);
  EXPECT_LE(r.trials, 10);                   // 1, 2, 4, then bisections of [2, 4] down to 1% of 2.1
  EXPECT_GT(r.best.step, 2.1 * (1 - 0.01));  // within 1% of the jump
  EXPECT_LT(r.best.step, 2.1);
  EXPECT_LE(r.best.value, endless.best.value + 0.02);
}

// phi falls along a line, and past a = 2.1 the evaluation is not valid (a negative NLL): the
// zoom bisects the border, each trial winning at most the bracket's width, and with
// negligible_gain stops once that is below 10% of the decrease in hand, with tolerance 0 too.
// Before any decrease it never stops: the border at 1e-3 is still found.
TEST(WolfeLineSearch, StopsBisectingTheBorderOfValidStepsOnceLittleIsLeftToWin) {
  const auto border = [](double at) {
    return [at](double a) { return LinePoint{a, -a, -1.0, a < at}; };
  };
  WolfeSettings settings;
  const WolfeResult endless = strong_wolfe_search(border(2.1), LinePoint{0, 0, -1, true}, 1.0);
  EXPECT_EQ(endless.trials, settings.max_trials);
  settings.negligible_gain = 0.1;
  const WolfeResult r = strong_wolfe_search(border(2.1), LinePoint{0, 0, -1, true}, 1.0, settings);
  ASSERT_TRUE(r.decreased);
  EXPECT_TRUE(r.best.valid);
  // 1, 2, 4, then 3, 2.5, 2.25, 2.125: the bracket [2, 2.125] is below 0.1 of the decrease 2.
  EXPECT_EQ(r.trials, 7);
  EXPECT_GT(r.best.step, 2.1 - 0.1 * 2.1);
  EXPECT_LT(r.best.step, 2.1);
  const WolfeResult near_zero =
      strong_wolfe_search(border(1e-3), LinePoint{0, 0, -1, true}, 1.0, settings);
  ASSERT_TRUE(near_zero.decreased);
  EXPECT_LT(near_zero.best.step, 1e-3);
  EXPECT_GT(near_zero.best.step, 0.9e-3);
}

TEST(WolfeLineSearch, KeepsStepZeroWhenNothingDecreases) {
  auto phi = [](double a) { return LinePoint{a, 1.0 + a, 1.0, a < 1e-3}; };
  const WolfeResult r = strong_wolfe_search(phi, LinePoint{0, 1.0, -1.0, true}, 1.0);
  EXPECT_FALSE(r.decreased);
  EXPECT_EQ(r.best.step, 0.0);
  EXPECT_EQ(r.best.value, 1.0);
  EXPECT_LE(r.trials, WolfeSettings{}.max_trials);
}

}  // namespace
}  // namespace pdsp
