#pragma once
// What the stochastic learners (dlpw, pegasos) share behind the Learner interface: the run's
// slice, settings and ranks, and a run that is train_stochastic with the learner's oracle.
#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/stochastic/stochastic_steps.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

class StochasticLearner : public Learner {
 public:
  TrainResult run(TrainingObserver& observer, TrainingState start) override {
    return train_stochastic(oracle(), *slice_, stochastic_config(*config_), *comm_, observer,
                            std::move(start));
  }

 protected:
  // Called first by set_up: keeps the run's parts and checks, on every rank, that the slices
  // have labels. Collective.
  void start_set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) {
    slice_ = &slice;
    config_ = &config;
    comm_ = &comm;
    run_collectively(comm, [&] {
      if (!slice.has_labels())
        throw InputError(slice.source() + ": /vars/label: training needs ground-truth labels");
    });
  }
  virtual BatchOracle& oracle() = 0;

  const Dataset* slice_ = nullptr;
  TrainConfig* config_ = nullptr;
  Communicator* comm_ = nullptr;
};

}  // namespace pdsp
