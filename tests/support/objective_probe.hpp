#pragma once
// F(theta, lambda) and its theta-gradient evaluated through the library's LocalProblem, in the
// serial setting (the trainer's global terms without the allreduce).
#include <numeric>
#include <span>
#include <vector>

#include "pdsp/learning/local_problem.hpp"
#include "pdsp/optim/regularizer.hpp"

namespace pdsp::testing {

class ObjectiveProbe {
 public:
  ObjectiveProbe(LocalProblem& problem, Regularizer regularizer)
      : problem_(problem),
        regularizer_(regularizer),
        d_(static_cast<size_t>(problem.num_params())) {
    problem_.ground_truth_moments(d_);
  }

  // F at theta with the current messages.
  double value(std::span<const double> theta) {
    problem_.set_theta(theta);
    return problem_.objective() - std::inner_product(d_.begin(), d_.end(), theta.begin(), 0.0) +
           regularizer_.value(theta);
  }

  // Lemma 4's gradient at theta with the current messages.
  std::vector<double> gradient(std::span<const double> theta) {
    problem_.set_theta(theta);
    problem_.evaluate();
    std::vector<double> g(d_.size());
    problem_.model_moments(g);
    for (size_t r = 0; r < g.size(); ++r) g[r] -= d_[r];
    regularizer_.add_gradient(theta, g);
    return g;
  }

 private:
  LocalProblem& problem_;
  Regularizer regularizer_;
  std::vector<double> d_;
};

}  // namespace pdsp::testing
