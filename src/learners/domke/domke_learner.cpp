// --learner domke: Domke's alternation of function-class fits and message sweeps
// (alternating_fits.hpp), for linear potentials and networks alike, at eps > 0, on whole or
// split examples (its sweeps and fits run on the LocalProblem as the primal-dual learner's do).
#include <memory>

#include "pdsp/learners/domke/alternating_fits.hpp"
#include "pdsp/learners/primal_dual/problem_learner.hpp"

namespace pdsp {
namespace {

class DomkeLearner final : public ProblemLearner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    ProblemLearner::set_up(slice, config, comm);
    refuse_saddle_problem(*problem_, config, comm);
  }
  TrainResult run(TrainingObserver& observer, TrainingState start) override {
    return train_alternating_fits(*problem_, *config_, *comm_, observer, std::move(start));
  }
};

}  // namespace

LearnerEntry domke_learner() {
  LearnerTraits traits;
  traits.epsilon_low = kSmallestEpsilon;
  traits.epsilon_rule = "fits at a positive temperature (--epsilon > 0; Domke uses 0.1)";
  traits.nonlinear_models = true;
  traits.nonlocal_terms = true;
  traits.checkpoints = true;
  traits.split_examples = true;
  return {"domke",
          "Domke's alternation: fit each function class at fixed messages (a logistic "
          "regression biased by them), then --fit-sweeps message sweeps",
          traits, [] { return std::make_unique<DomkeLearner>(); }};
}

}  // namespace pdsp
