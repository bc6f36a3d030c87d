#pragma once
// A fixed number of preconditioned conjugate-gradient steps on A x = b from x = 0 (Nocedal &
// Wright, Numerical Optimization, Algorithm 5.3). Its result x satisfies b'x = x'Ax > 0 for any
// number of steps, so it can stand for A^{-1} b inside L-BFGS's two-loop recursion and keep
// -H g a descent direction. The count is fixed rather than set by a residual test so that every
// MPI rank runs the same collectives when `a` reduces over ranks.
#include <functional>
#include <span>

namespace pdsp {

using LinearMap = std::function<void(std::span<const double> in, std::span<double> out)>;

// x ~ A^{-1} b after `steps` >= 1 steps with the preconditioner M^{-1} (`precondition`); A and M
// symmetric positive definite. Stops early only when the search direction has no positive
// curvature (then A is not positive definite along it, or the residual is already 0).
void conjugate_gradient(int steps, const LinearMap& a, const LinearMap& precondition,
                        std::span<const double> b, std::span<double> x);

}  // namespace pdsp
