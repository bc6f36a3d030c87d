#pragma once
// A line search for the strong Wolfe conditions (Nocedal & Wright, Numerical Optimization,
// Algorithms 3.5 and 3.6: bracketing, then zoom by safeguarded interpolation) on
// phi(alpha) = f(x + alpha d), for objectives whose evaluation can fail: an evaluation that is
// not valid (approximate inference that did not converge, a value that is not finite) counts
// as a step too long, and the search backs off towards the last valid point. It returns the
// best valid point that decreases f enough, even when the curvature condition was never met.
#include <functional>

namespace pdsp {

struct LinePoint {
  double step = 0;   // alpha
  double value = 0;  // phi(alpha)
  double slope = 0;  // phi'(alpha) = g(x + alpha d)' d
  bool valid = true;
};

struct WolfeSettings {
  double sufficient_decrease = 1e-4;  // c1: phi(alpha) <= phi(0) + c1 alpha phi'(0)
  double curvature = 0.9;             // c2: |phi'(alpha)| <= c2 |phi'(0)|
  int max_trials = 20;                // evaluations of phi
  double max_step = 1e20;
  // The zoom ends on its best point once the bracket is narrower than this fraction of that
  // point's step (0: only max_trials ends it). Where phi jumps up (another fixed point of
  // approximate inference takes over past some step) no point meets the curvature condition,
  // and the zoom would spend every trial creeping towards the jump.
  double bracket_tol = 0;
  // The zoom also ends when its bracket's far end is not valid and the decrease left in the
  // bracket, at most |phi'(lo)| times its width to first order, is below this fraction of the
  // decrease lo already holds (0: never): bisecting the border of the valid steps (where
  // approximate inference stops converging or its NLL turns negative) wins only a sliver more.
  double negligible_gain = 0;
};

struct WolfeResult {
  LinePoint best;             // the accepted point (step 0 and phi(0) when none decreased f)
  bool decreased = false;     // best satisfies the sufficient decrease condition
  bool strong_wolfe = false;  // ... and the curvature condition
  int trials = 0;
  int invalid_trials = 0;  // evaluations that were not valid
};

// `start` is phi at 0 (valid, slope < 0); the first trial is `initial_step`. `phi` evaluates a
// step; the search may call it again on a step it tried before (it does not cache).
WolfeResult strong_wolfe_search(const std::function<LinePoint(double)>& phi, const LinePoint& start,
                                double initial_step, const WolfeSettings& settings = {});

}  // namespace pdsp
