#pragma once
// dlpw's part of the stochastic steps (Meshi et al. 2010; docs/design.md §9.2): each example's
// messages on a LocalProblem, kept between visits. A visit runs --inner-sweeps block updates of
// the visited examples' messages at the current theta; the beliefs of those messages give the
// subgradient in theta of the examples' dual losses, an upper bound of their loss terms that
// the sweeps tighten.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pdsp/learners/stochastic/stochastic_steps.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/svm_objective.hpp"

namespace pdsp {

class DlpwOracle final : public BatchOracle {
 public:
  // `exact`: F_0 by the LP oracle (binary pairwise data at eps = 0); null: F from the messages.
  // Collective.
  DlpwOracle(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
             std::unique_ptr<SvmObjective> exact);

  bool add_subgradients(std::span<const int64_t> examples, std::span<const double> theta,
                        std::span<double> z) override;
  void explain_non_finite() override { problem_.require_finite(); }
  double objective(std::span<const double> theta) override;
  std::string objective_note() const override;

 private:
  LocalProblem& problem_;
  const TrainConfig& config_;
  Communicator& comm_;
  std::unique_ptr<SvmObjective> exact_;
  std::vector<double> moments_;  // one visit's
};

}  // namespace pdsp
