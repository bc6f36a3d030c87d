#pragma once
// Training at eps = 0 by continuation (docs/eps_zero.md). At eps = 0, F is piecewise linear and a
// descent method on theta stalls at its kinks, so training minimises F_w, the objective at a
// positive temperature w, and lowers w as it goes. With counting numbers >= 0 every soft-max is
// at least the max it smooths, so F_w(theta, lambda) bounds the eps = 0 primal from above; the
// eps = 0 dual D_0 (the expected loss minus the regulariser's conjugate) bounds it from below at
// consistent beliefs (those of the messages, made consistent by local_polytope.hpp). Their
// difference, the certificate, is the gap of the problem at w plus the entropy terms
// sum tau H(b) >= 0 that the smoothing adds to the dual:
//
//   F_w - D_0 = (F_w - D_w) + (D_w - D_0).
//
// The first part shrinks as training at w goes on; the second only by lowering w. At small w
// the beliefs jump between the sides of the kinks of the eps = 0 problem from one iteration to
// the next, and D_0 at any one of them stays far below the optimum even when theta is close to
// it; the dual side of the certificate is therefore D_0 at the best mixture of the consistent
// beliefs kept in a bundle (dual_bundle.hpp).
namespace pdsp {

// Whether training at `epsilon` goes by this continuation: at eps = 0 exactly (the one place
// that decides it).
inline bool trains_by_smoothing(double epsilon) {
  return epsilon == 0;
}

struct SmoothingProgress {
  double temperature = 0;       // w
  double smoothed_gap = 0;      // F_w - D_w
  double entropy = 0;           // D_w - D_0 = sum tau H(b) >= 0
  double target = 0;            // the certificate must fall below this
  bool small_decrease = false;  // F_w decreased by less than tol in the last step
};

// The temperature of the next iteration. While F_w still decreases by more than tol, w stays
// when the smoothing is already small enough (entropy below half the target: what is left is
// optimisation at w) or the problem at w is still far from its optimum (its gap above the
// entropy). Otherwise w drops by the factor that would bring the entropy to half the target if
// it were proportional to w, kept within [1/10, 1/2] so that the messages and theta of w remain
// a warm start for the next temperature, and never below kSmallestEpsilon. A small decrease of
// F_w without a certificate always lowers w: the relative decrease of F_w says nothing about the
// eps = 0 problem, and lower temperatures bring beliefs that tighten the dual side.
double next_temperature(const SmoothingProgress& progress);

}  // namespace pdsp
