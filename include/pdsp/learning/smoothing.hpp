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
// it. Any mixture of consistent beliefs is a point of the local polytope too, and its moments and
// expected loss are the same mixture of theirs; so the dual side of the certificate is D_0 at the
// best mixture of the last kDualPoints consistent beliefs (a small concave problem over the
// mixture weights), or the best D_0 seen before, whichever is larger.
#include <cmath>
#include <span>
#include <vector>

#include "pdsp/learning/regularizer.hpp"

namespace pdsp {

// Enough points for the mixtures an optimum needs when a few examples sit on kinks, few enough
// that the mixture problem costs less than an evaluation.
inline constexpr int kDualPoints = 16;

// The model moments z and expected losses of the last kDualPoints consistent beliefs, and the
// best lower bound D_0 found (plain values, so that checkpoints store them).
struct DualBundle {
  std::vector<double> moments;  // up to kDualPoints blocks of `params` values
  std::vector<double> losses;   // sum b_v e_v of each
  int next = 0;                 // the block the next point replaces once the bundle is full
  double best = -INFINITY;

  // Adds a point and returns the new best D_0 = max over mixtures omega of
  // sum omega_k loss_k - conj(sum omega_k z_k - d), found by projected gradient ascent from the
  // best mixture of the points (any omega gives a valid bound, so stopping early only weakens it).
  double add(std::span<const double> z, double loss, std::span<const double> d,
             const Regularizer& regularizer);
};

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
