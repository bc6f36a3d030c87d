#pragma once
// The objective of the likelihood baselines over all ranks,
//   L(theta) / V = (sum_n [log Z_n(theta) - <d_n, theta>] + (C/2) |theta|^2) / V,
// V the variables of the whole data set (so that tolerances mean the same at every image size),
// with log Z_n and the marginals from an ApproximateCrf; and the per-example gradients of SGD.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// L / V at one theta. `valid` is false when some example's inference did not converge, or when
// the starts prediction uses leave its approximate NLL negative even at the best fixed point
// they find: the value and gradient are then not those of the objective, or describe a theta
// whose predictions come from fixed points that fit no likelihood, and a line search must not
// trust them.
struct Evaluation {
  double value = NAN;
  bool valid = false;
  int64_t unconverged = 0;  // examples, all ranks
  // Examples whose approximate NLL log Z_n - <d_n, theta> is negative at the best fixed point of
  // prediction's starts (a true likelihood cannot exceed 1: inference sits at a poor fixed point
  // there; the warm start, when it found a better one, only raises the NLL), all ranks, and the
  // smallest such NLL.
  int64_t negative = 0;
  double lowest_nll = NAN;
};

class Likelihood {
 public:
  // Collective (the ground-truth moments and the variable count are summed over the ranks).
  Likelihood(ApproximateCrf& crf, double C, Communicator& comm);

  double variables() const { return variables_; }
  // Which starts an evaluation's inference tries in each example.
  enum class Starts {
    // The accepted iterate's state and one start pulled towards each state: a line search's
    // trial, cheap because these converge in a few sweeps (the start towards the own best
    // states and zero messages can take hundreds). Its NLL check is against the fixed point it
    // keeps.
    Trial,
    // ApproximateCrf::infer_all_best_start: the accepted iterate's state, zero messages, one
    // pulled towards each state, one towards each variable's own best state, so that log Z is
    // that of the lowest Bethe free energy found; an example whose approximate NLL at the best
    // of prediction's starts (all but the accepted state) is negative also tries the annealed
    // start, as prediction does. Every point training accepts is evaluated so.
    All,
    // As All, with the annealed start in every example.
    AllAnnealed,
  };
  // The objective and its gradient (of L / V) at theta. Collective.
  Evaluation evaluate(std::span<const double> theta, std::span<double> grad,
                      Starts starts = Starts::All);
  // The stochastic gradient of L (not divided by V) for example `global` (in file order) with
  // its 1/N share of the regulariser, inference from the example's current state. The rank that
  // holds the example computes it and the allreduce hands it to all, so SGD visits the examples
  // in the same order, with the same result, on any rank count. Collective.
  void example_gradient(int64_t global, std::span<const double> theta, std::span<double> grad);

 private:
  ApproximateCrf& crf_;
  const Regularizer regularizer_;  // (C/2) |theta|^2: p = 2 is all the baselines accept
  Communicator& comm_;
  size_t params_;
  double variables_ = 1;
  std::vector<double> d_;
  std::vector<double> negative_truth_;  // minus the ground-truth weights, for example gradients
};

}  // namespace pdsp
