#pragma once
// What the learners that train on a LocalProblem share (primal-dual, domke): the problem built
// by make_training_problem at set-up, with the settings and communicator of the run, and the
// set-up line that names its kernels and potential model.
#include <memory>
#include <string>

#include "pdsp/features/tree_functions.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"

namespace pdsp {

class ProblemLearner : public Learner {
 public:
  void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) override {
    config_ = &config;
    comm_ = &comm;
    problem_ = make_training_problem(slice, config, comm);
  }
  std::string set_up_summary() const override {
    const PotentialModel& model = problem_->model();
    return "kernels (rank 0): " + problem_->kernel_name() + "; potential model " + model.name() +
           (model.is_linear() ? ""
                              : " (nonlinear: networks start from seeded random weights, trees "
                                "from none; no dual, no certificate, no curvature model)");
  }
  CheckpointedMessages* checkpointed() override { return problem_.get(); }
  std::vector<StoredEnsemble> model_trees() const override {
    const TreeFunctions* trees = problem_->model().tree_functions();
    return trees ? trees->stored() : std::vector<StoredEnsemble>{};
  }
  std::vector<double> model_theta(std::span<const double> theta) const override {
    return problem_->model().model_file_theta(theta);
  }

 protected:
  TrainConfig* config_ = nullptr;
  Communicator* comm_ = nullptr;
  std::unique_ptr<LocalProblem> problem_;
};

}  // namespace pdsp
