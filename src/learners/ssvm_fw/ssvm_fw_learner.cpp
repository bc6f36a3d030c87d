// --learner ssvm-fw: the structured SVM (eps = 0) on binary pairwise data through its dual, by
// block pairwise Frank-Wolfe with an exact LP oracle (ssvm_frank_wolfe.hpp).
#include <memory>

#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/ssvm_fw/ssvm_frank_wolfe.hpp"

namespace pdsp {
namespace {

class SsvmFwLearner final : public Learner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    solver_ =
        std::make_unique<SsvmFrankWolfe>(slice,
                                         SsvmConfig{config.C, config.loss_weight, config.max_iters,
                                                    config.tol, config.max_seconds, config.seed},
                                         comm);
  }

  TrainResult run(TrainingObserver& observer, TrainingState) override {
    return solver_->run(observer);
  }

 private:
  std::unique_ptr<SsvmFrankWolfe> solver_;
};

}  // namespace

LearnerEntry ssvm_fw_learner() {
  LearnerTraits traits;
  traits.epsilon_high = 0;
  traits.epsilon_rule = "solves the structured SVM (eps = 0)";
  traits.binary_pairwise_only = true;
  return {"ssvm-fw",
          "the structured SVM (eps = 0) on binary pairwise data: block Frank-Wolfe on its dual "
          "with an exact LP oracle",
          traits, [] { return std::make_unique<SsvmFwLearner>(); }};
}

}  // namespace pdsp
