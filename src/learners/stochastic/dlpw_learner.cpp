// --learner dlpw: Meshi et al.'s dual-loss learner (ICML 2010; docs/design.md §9.2). Each example
// keeps its messages between visits; a visit runs --inner-sweeps block updates of them at the
// current theta (at eps = 0 the max-sum diffusion star updates of the paper, above it the
// soft-max form of the same updates, design.md §3), then a Pegasos step on theta
// (stochastic_steps.hpp) from the subgradient of the examples' dual losses.
#include <memory>

#include "pdsp/inference/binary_lp.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learners/stochastic/dlpw_oracle.hpp"
#include "pdsp/learners/stochastic/stochastic_learner.hpp"

namespace pdsp {
namespace {

class DlpwLearner final : public StochasticLearner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    start_set_up(slice, config, comm);
    problem_ = make_training_problem(slice, config, comm, /*smoothed=*/false);
    refuse_saddle_problem(*problem_, config, comm);
    double other[1] = {is_binary_pairwise(slice) ? 0.0 : 1.0};
    comm.allreduce({}, other);
    std::unique_ptr<SvmObjective> exact;
    if (config.epsilon == 0 && other[0] == 0)
      exact = std::make_unique<SvmObjective>(slice, config.C, config.loss_weight, comm);
    oracle_ = std::make_unique<DlpwOracle>(*problem_, config, comm, std::move(exact));
  }

  std::string set_up_summary() const override {
    return "kernels (rank 0): " + problem_->kernel_name() +
           "; objective: " + oracle_->objective_note();
  }

  CheckpointedMessages* checkpointed() override { return problem_.get(); }

 private:
  BatchOracle& oracle() override { return *oracle_; }
  std::unique_ptr<LocalProblem> problem_;
  std::unique_ptr<DlpwOracle> oracle_;
};

}  // namespace

LearnerEntry dlpw_learner() {
  LearnerTraits traits;
  traits.checkpoints = true;
  return {"dlpw",
          "Meshi et al.'s dual-loss learner: each example's messages kept between visits, a few "
          "sweeps of them per visit, then a stochastic step on theta",
          traits, [] { return std::make_unique<DlpwLearner>(); }};
}

}  // namespace pdsp
