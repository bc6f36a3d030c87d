#pragma once
// Unconstrained minimisation of a smooth function by L-BFGS (lbfgs_memory.hpp) with the strong
// Wolfe search (wolfe_line_search.hpp), for subproblems whose every evaluation is exact and
// valid: the fits of one function class at fixed messages (learners/domke).
#include <functional>
#include <span>
#include <vector>

namespace pdsp {

// f at x, its gradient written to grad.
using SmoothObjective = std::function<double(std::span<const double> x, std::span<double> grad)>;

struct MinimizeSettings {
  int max_iters = 100;
  // Converged when |grad| <= gradient_tol * max(1, |x|).
  double gradient_tol = 1e-9;
  int memory = 10;
};

struct MinimizeResult {
  double value = 0;
  double grad_norm = 0;
  int iterations = 0;
  int evaluations = 0;
  bool converged = false;  // the gradient test held; else the iterations ran out or no step
                           // along -grad decreased f
};

MinimizeResult minimize_lbfgs(const SmoothObjective& f, std::vector<double>& x,
                              const MinimizeSettings& settings = {});

}  // namespace pdsp
