#pragma once
// Boosting rounds of the trees function class (Domke, NIPS 2013, section 8): at fixed messages,
// a round adds one regression tree per output to an ensemble. The trees fit the gradient of F
// with respect to the potentials of the type's regions (belief less the ground truth's
// indicator) by least squares. Each leaf's value, times the shrinkage, is then
//   boost (Domke's alternation): the minimiser of F along that leaf's potentials, a Newton
//     solve of the logistic loss that the messages bias, with C/2 delta^2 on the value as on a
//     parameter; it needs every counting number positive (a negative one makes F at fixed
//     messages unbounded below);
//   add_step_round (the primal-dual learner): one Newton step of that loss from 0 with the
//     curvature b(1 - b) / |c_r eps| at any sign of c_r, a direction that the learner's step
//     search scales (scale_step), at saddle counting numbers too.
//
// Several ranks: every rank gathers the type's rows of all ranks (features once, beliefs and
// truths each round, by a sum over zero-padded arrays in the file's order of the regions) and
// grows the same trees on them, so the trees do not depend on the rank count. The limit: one
// type's rows (dim + 3 x outputs values each) must fit in one rank's memory.
#include <cstdint>
#include <memory>
#include <vector>

#include "pdsp/features/tree_functions.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class TreeFits {
 public:
  // Gathers the rows of every ensemble of `trees` (collective).
  TreeFits(const LocalProblem& problem, TreeFunctions& trees, Communicator& comm);
  ~TreeFits();
  // Adds `rounds` rounds to each ensemble of `kind` at the problem's current messages and
  // theta, which are left as they are; the potentials follow (set_theta). Collective.
  void boost(LocalProblem& problem, std::span<const double> theta, uint8_t kind, int rounds,
             double C);
  // Adds one round to every ensemble at the problem's last evaluation's beliefs, its leaves
  // Newton steps; returns the derivative of F along the new trees (<= 0; the same on every
  // rank). The potentials do not follow until the caller sets theta. Collective.
  double add_step_round(const LocalProblem& problem, double C);
  // Scales the trees of the last add_step_round by `factor` and moves the margins with them.
  // A power of two (or 0) keeps them bitwise what a reload of the stored trees computes.
  void scale_step(double factor);

 private:
  struct Gathered;
  enum class LeafRule { Minimise, NewtonStep };
  // One round on ensemble e at the last evaluation's beliefs; returns the derivative of F along
  // the new trees.
  double round(const LocalProblem& problem, size_t e, double C, LeafRule rule);
  // The trees of ensemble e's last round at this slice's rows: the round's own values at the
  // gathered rows (the same leaves, added to 0); a slice that holds copies of cut factors (not
  // among the gathered rows) looks all of its rows up again instead.
  std::vector<double> last_round_at_rows(size_t e) const;

  TreeFunctions& trees_;
  Communicator& comm_;
  std::vector<std::unique_ptr<Gathered>> gathered_;  // per ensemble
  // Of the last add_step_round, per ensemble: the margins before it and its trees' values.
  std::vector<std::vector<double>> step_base_, step_trees_;
};

}  // namespace pdsp
