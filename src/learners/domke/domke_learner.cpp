// --learner domke: Domke's alternation of function-class fits and message sweeps
// (alternating_fits.hpp), for linear potentials and networks alike, at eps > 0.
#include <memory>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/learners/domke/alternating_fits.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"

namespace pdsp {
namespace {

class DomkeLearner final : public Learner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    config_ = &config;
    comm_ = &comm;
    run_collectively(comm, [&] {
      problem_ = std::make_unique<LocalProblem>(slice, training_problem_settings(config),
                                                make_potential_model(slice, config.model_choice()));
      config.counting = problem_->counting().mode;
    });
  }

  std::string set_up_summary() const override {
    return "kernels (rank 0): " + problem_->kernel_name() + "; potential model " +
           problem_->model().name();
  }

  TrainResult run(TrainingObserver& observer, TrainingState) override {
    return train_alternating_fits(*problem_, *config_, *comm_, observer);
  }

 private:
  TrainConfig* config_ = nullptr;
  Communicator* comm_ = nullptr;
  std::unique_ptr<LocalProblem> problem_;
};

}  // namespace

LearnerEntry domke_learner() {
  LearnerTraits traits;
  traits.epsilon_low = kSmallestEpsilon;
  traits.epsilon_rule = "fits at a positive temperature (--epsilon > 0; Domke uses 0.1)";
  traits.nonlinear_models = true;
  return {"domke",
          "Domke's alternation: fit each function class at fixed messages (a logistic "
          "regression biased by them), then --fit-sweeps message sweeps",
          traits, [] { return std::make_unique<DomkeLearner>(); }};
}

}  // namespace pdsp
