// --learner primal-dual: Hazan & Urtasun's algorithm (docs/design.md §5), the outer loop of
// trainer.cpp on a LocalProblem, at any temperature, on split examples and with checkpoints.
#include <cstdio>
#include <memory>

#include "pdsp/learners/primal_dual/problem_learner.hpp"

namespace pdsp {
namespace {

class PrimalDualLearner final : public ProblemLearner {
 public:
  TrainResult run(TrainingObserver& observer, TrainingState start) override {
    return train(*problem_, *config_, *comm_, observer, std::move(start));
  }

  // The halo exchanges of split examples over the run: values sent (all ranks), the slowest
  // rank's seconds in them, sweeps (nothing when no example was split).
  Summary run_summary(Communicator& comm) override {
    const HaloExchange* halo = problem_->halo();
    double sums[2] = {halo ? static_cast<double>(halo->values_sent()) : 0.0, halo ? 1.0 : 0.0};
    double maxima[2] = {halo ? halo->seconds() : 0.0,
                        halo ? static_cast<double>(halo->sweeps()) : 0};
    comm.allreduce(sums, maxima);
    if (sums[1] == 0) return {};
    char line[200];
    std::snprintf(line, sizeof line,
                  "halo exchanges: %.3f MB sent by %g shard(s) in %g sweeps, at most %.3f s on "
                  "one rank",
                  8e-6 * sums[0], sums[1], maxima[1], maxima[0]);
    return {
        line,
        {{"halo_values_sent", sums[0]}, {"halo_seconds", maxima[0]}, {"halo_sweeps", maxima[1]}}};
  }
};

}  // namespace

LearnerEntry primal_dual_learner() {
  LearnerTraits traits;
  traits.any_p = true;
  traits.checkpoints = true;
  traits.split_examples = true;
  traits.single_precision = true;
  traits.nonlinear_models = true;
  traits.nonlocal_terms = true;
  return {"primal-dual", "Hazan & Urtasun's primal-dual message passing, at any epsilon", traits,
          [] { return std::make_unique<PrimalDualLearner>(); }};
}

}  // namespace pdsp
