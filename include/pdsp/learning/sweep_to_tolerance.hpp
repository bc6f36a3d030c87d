#pragma once
// Message sweeps until they settle, for inference at fixed potentials (prediction, Bethe-RDA's
// oracle calls). Collective over the ranks that share the problem's data.
#include <cmath>

#include "pdsp/learning/local_problem.hpp"

namespace pdsp {

// Sweeps until no message moves by more than `tolerance` on any rank (each sweep's largest
// change is max-allreduced, so every rank stops together) or `max_sweeps` have run, calling
// after_sweep(sweeps so far, largest change) after each. Returns the sweeps run and sets
// `change` to the last one's largest change (infinity when none ran).
template <class AfterSweep>
int sweep_to_tolerance(LocalProblem& problem, int max_sweeps, double tolerance, double& change,
                       AfterSweep&& after_sweep) {
  int sweeps = 0;
  double largest[1] = {INFINITY};
  while (sweeps < max_sweeps && largest[0] > tolerance) {
    largest[0] = problem.sweep(1);
    problem.data().communicator().allreduce({}, largest);
    after_sweep(++sweeps, largest[0]);
  }
  change = largest[0];
  return sweeps;
}

}  // namespace pdsp
