// --learner lbp-sgd | lbp-lbfgs | mf-sgd | mf-lbfgs: the likelihood baselines of Hazan &
// Urtasun's Figure 2 (crf_baselines.hpp), a CRF (eps = 1) whose log Z and marginals come from
// loopy BP or mean field run to a tolerance, trained by SGD or L-BFGS.
#include <memory>

#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/likelihood/crf_baselines.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

class LikelihoodLearner final : public Learner {
 public:
  explicit LikelihoodLearner(std::string name) : name_(std::move(name)) {}

  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    comm_ = &comm;
    run_collectively(comm, [&] {
      parse_baseline_learner(name_, baseline_);
      if (!slice.has_labels())
        throw InputError(config.data + ": /vars/label: training needs ground-truth labels");
      crf_ = std::make_unique<ApproximateCrf>(slice, baseline_.inference, config.inference_sweeps,
                                              config.inference_tol);
    });
    baseline_.C = config.C;
    baseline_.max_iters = config.max_iters;
    baseline_.tol = config.tol;
    baseline_.step = config.initial_step;
    baseline_.inference_sweeps = config.inference_sweeps;
    baseline_.inference_tol = config.inference_tol;
  }

  TrainResult run(TrainingObserver& observer, TrainingState) override {
    return train_crf_baseline(*crf_, baseline_, *comm_, observer);
  }

  // The model predicts with the learner's own inference, a CRF at eps = 1.
  Fields model_attributes(const TrainConfig& config) const override {
    TrainConfig recorded = config;
    recorded.epsilon = 1.0;
    Fields attributes = recorded.fields();
    attributes.emplace_back("inference", inference_name(baseline_.inference));
    return attributes;
  }

 private:
  std::string name_;
  Communicator* comm_ = nullptr;
  BaselineConfig baseline_;
  std::unique_ptr<ApproximateCrf> crf_;
};

}  // namespace

LearnerEntry likelihood_learner(const std::string& name) {
  const bool loopy = name.starts_with("lbp");
  const bool sgd = name.ends_with("sgd");
  // The baselines minimise the regularised negative conditional log-likelihood under their
  // approximate inference, not the primal-dual F.
  LearnerTraits traits;
  traits.objective = "neg_log_likelihood";
  return {name,
          std::string("likelihood baseline: ") + (loopy ? "loopy BP" : "mean field") + " inside " +
              (sgd ? "SGD" : "L-BFGS"),
          traits, [name] { return std::make_unique<LikelihoodLearner>(name); }};
}

}  // namespace pdsp
