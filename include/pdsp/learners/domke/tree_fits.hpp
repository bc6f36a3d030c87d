#pragma once
// The boosted classes' fits of Domke's alternation (NIPS 2013, section 8): at fixed messages,
// each round adds one regression tree per output to every ensemble of a kind. The trees fit the
// gradient of F with respect to the potentials of the type's regions (belief less the ground
// truth's indicator) by least squares; each leaf's value then minimises F along that leaf's
// potentials (a Newton solve of the logistic loss that the messages bias, with C/2 delta^2 on
// the value as on a parameter), times the shrinkage.
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

 private:
  struct Gathered;
  // One round on ensemble e at the last evaluation's beliefs.
  void round(const LocalProblem& problem, size_t e, double C);

  TreeFunctions& trees_;
  Communicator& comm_;
  std::vector<std::unique_ptr<Gathered>> gathered_;  // per ensemble
};

}  // namespace pdsp
