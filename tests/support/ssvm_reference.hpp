#pragma once
// Reference optima of the structured SVM (eps = 0, p = 2), independent of pdsp's kernels:
//
//   P(theta) = sum_n max_{m in M_n} [ theta . (phi(m) - phi(y_n)) + loss(m) ] + (C/2) |theta|^2,
//
// where M_n is a finite set of points of example n's marginal space: every labelling (the exact
// structured SVM; on trees also its local-polytope relaxation), or every half-integral point of
// the local polytope of a binary pairwise example, which holds all of that polytope's vertices
// (so the max over them is the LP relaxation pdsp solves at eps = 0 on loops). The dual
//
//   D(alpha) = sum alpha . loss - |sum alpha (phi(m) - phi(y))|^2 / (2C),  alpha_n a distribution
//
// is maximised by accelerated projected gradient until P(theta(alpha)) - D(alpha) certifies it.
#include <span>
#include <utility>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp::testing {

enum class SsvmPoints { Labellings, HalfIntegralLocalPolytope };

struct SsvmReference {
  double primal = 0;          // P(theta)
  double dual = 0;            // D(alpha) <= optimum <= primal
  std::vector<double> theta;  // theta(alpha) = -(1/C) sum alpha (phi(m) - phi(y))
};

SsvmReference solve_ssvm(const Dataset& data, double loss_weight, double C, SsvmPoints points);
// P(theta) over the same points.
double ssvm_primal(const Dataset& data, std::span<const double> theta, double loss_weight, double C,
                   SsvmPoints points);

// Two triangles and a 2 x 2 grid of binary variables with random features, on which the
// local-polytope relaxation's optimum (C = 1) lies above the exact structured SVM's: a learner
// that agrees with the relaxation there solves the relaxation. Returns the data set and the
// relaxed optimum's excess over the exact one.
std::pair<Dataset, double> loops_with_a_loose_relaxation();

}  // namespace pdsp::testing
