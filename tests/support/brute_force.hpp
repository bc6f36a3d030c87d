#pragma once
// Exact reference by enumeration of every joint labelling of each example. Written
// independently of the library's kernels (its own potentials, its own soft-max), so that the
// tests compare two implementations rather than one with itself.
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp::testing {

struct ExactSolution {
  double objective = 0;           // sum_n smax_eps(scores) - d.theta + (C/p)|theta|_p^p
  double smax_sum = 0;            // sum_n smax_eps(scores)
  std::vector<double> gradient;   // of objective
  std::vector<double> marginals;  // [states | table entries] of p_eps(y) ∝ exp(score / eps)
};

// Scores include the Hamming loss of the observed variables scaled by `loss_weight` (0: no loss
// augmentation) and `state_offset` (one value per state; empty: none), whose ground-truth part
// the objective subtracts as it does d.theta. The ground truth covers the variables labelled
// >= 0 and the factors all of whose variables are. eps = 0 gives the max and the uniform
// distribution over the maximisers. With `held` (one entry per variable; empty: none) only the
// labellings with y_v = held[v] wherever held[v] >= 0 are enumerated: the conditional problem.
ExactSolution solve_exactly(const Dataset& data, std::span<const double> theta, double epsilon,
                            double loss_weight, double C, double p,
                            std::span<const double> state_offset = {},
                            std::span<const int32_t> held = {});

// Minimises the exact objective over theta (gradient descent with backtracking, strongly convex
// for p = 2); returns theta*.
std::vector<double> exact_optimum(const Dataset& data, double epsilon, double loss_weight, double C,
                                  double p);

}  // namespace pdsp::testing
