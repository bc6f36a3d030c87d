#include "pdsp/optim/lbfgs_minimize.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/optim/lbfgs_memory.hpp"
#include "pdsp/optim/wolfe_line_search.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

MinimizeResult minimize_lbfgs(const SmoothObjective& f, std::vector<double>& x,
                              const MinimizeSettings& settings) {
  const size_t n = x.size();
  std::vector<double> grad(n), direction(n), trial(n), trial_grad(n), taken(n), before(n);
  LbfgsMemory memory;
  memory.reserve(n, settings.memory);
  MinimizeResult result;
  result.value = f(x, grad);
  result.evaluations = 1;
  const auto converged = [&] {
    return std::sqrt(dot(grad, grad)) <=
           settings.gradient_tol * std::max(1.0, std::sqrt(dot(x, x)));
  };
  while (!(result.converged = converged()) && result.iterations < settings.max_iters) {
    memory.direction(grad, direction);
    if (!(dot(grad, direction) < 0)) {  // -H g is no descent direction: start again along -g
      memory.clear();
      for (size_t i = 0; i < n; ++i) direction[i] = -grad[i];
    }
    const bool along_gradient = memory.pairs(n) == 0;
    double last_step = -1;
    const auto phi = [&](double step) {
      for (size_t i = 0; i < n; ++i) trial[i] = x[i] + step * direction[i];
      const double value = f(trial, trial_grad);
      ++result.evaluations;
      last_step = step;
      return LinePoint{step, value, dot(trial_grad, direction), std::isfinite(value)};
    };
    const double length = std::sqrt(dot(direction, direction));
    const WolfeResult search =
        strong_wolfe_search(phi, {0.0, result.value, dot(grad, direction), true},
                            along_gradient ? 1.0 / std::max(length, 1e-300) : 1.0);
    if (!search.decreased) {
      if (along_gradient) break;  // nothing decreases f: as far as the search can go
      memory.clear();
      continue;
    }
    if (search.best.step != last_step) phi(search.best.step);  // the accepted point's gradient
    ++result.iterations;
    before = grad;
    for (size_t i = 0; i < n; ++i) taken[i] = search.best.step * direction[i];
    x = trial;
    grad = trial_grad;
    result.value = search.best.value;
    memory.remember_step(taken, before);
    memory.complete_pair(grad, settings.memory);
  }
  result.grad_norm = std::sqrt(dot(grad, grad));
  return result;
}

}  // namespace pdsp
