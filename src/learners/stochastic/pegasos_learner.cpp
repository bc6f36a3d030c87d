// --learner pegasos: the comparator of Meshi et al. (ICML 2010): stochastic subgradient steps on
// the structured SVM (eps = 0) whose subgradients come from the loss-augmented LP vertex of each
// visited example, solved exactly (binary_lp.hpp) at every visit; the steps, order and average
// are dlpw's (stochastic_steps.hpp). Binary pairwise data only.
#include <memory>

#include "pdsp/learners/stochastic/stochastic_learner.hpp"
#include "pdsp/learning/svm_objective.hpp"

namespace pdsp {
namespace {

class LpVertexOracle final : public BatchOracle {
 public:
  explicit LpVertexOracle(std::unique_ptr<SvmObjective> objective)
      : objective_(std::move(objective)) {}

  bool add_subgradients(std::span<const int64_t> examples, std::span<const double> theta,
                        std::span<double> z) override {
    for (int64_t n : examples) objective_->add_subgradient(n, theta, z);
    return true;  // the LP's vertex is finite; a non-finite theta shows in the objective
  }
  void explain_non_finite() override {}
  double objective(std::span<const double> theta) override { return objective_->value(theta); }
  std::string objective_note() const override { return "F_0 exactly, by the LP oracle"; }

 private:
  std::unique_ptr<SvmObjective> objective_;
};

class PegasosLearner final : public StochasticLearner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    start_set_up(slice, config, comm);
    oracle_ = std::make_unique<LpVertexOracle>(
        std::make_unique<SvmObjective>(slice, config.C, config.loss_weight, comm));
  }

  std::string set_up_summary() const override { return "objective: " + oracle_->objective_note(); }

 private:
  BatchOracle& oracle() override { return *oracle_; }
  std::unique_ptr<LpVertexOracle> oracle_;
};

}  // namespace

LearnerEntry pegasos_learner() {
  LearnerTraits traits;
  traits.epsilon_high = 0;
  traits.epsilon_rule = "solves the structured SVM (eps = 0)";
  traits.binary_pairwise_only = true;
  return {"pegasos",
          "the structured SVM (eps = 0) on binary pairwise data by Pegasos: a stochastic "
          "subgradient step from each visited example's exact loss-augmented LP vertex",
          traits, [] { return std::make_unique<PegasosLearner>(); }};
}

}  // namespace pdsp
