#include "pdsp/learners/stochastic/dlpw_oracle.hpp"

#include "pdsp/learning/sweep_to_tolerance.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

DlpwOracle::DlpwOracle(LocalProblem& problem, const TrainConfig& config, Communicator& comm,
                       std::unique_ptr<SvmObjective> exact)
    : problem_(problem),
      config_(config),
      comm_(comm),
      exact_(std::move(exact)),
      moments_(static_cast<size_t>(problem.num_params())) {
  // Its first call agrees over the ranks whether any has c_v = 0; the visits, which only some
  // ranks make, then need no collective.
  problem_.resolve_kinks();
}

bool DlpwOracle::add_subgradients(std::span<const int64_t> examples, std::span<const double> theta,
                                  std::span<double> z) {
  if (examples.empty()) return true;
  problem_.select_examples(examples);
  problem_.set_theta(theta);
  problem_.sweep(config_.inner_sweeps);
  problem_.resolve_kinks();
  const bool finite = problem_.evaluate(LocalProblem::FiniteCheck::Local).finite;
  problem_.moments_less_truth(moments_);
  for (size_t r = 0; r < moments_.size(); ++r) z[r] += moments_[r];
  return finite;
}

double DlpwOracle::objective(std::span<const double> theta) {
  if (exact_) return exact_->value(theta);
  // min over the messages of F at theta, from above: every example's messages swept to
  // tolerance from where the visits left them, which are then put back.
  problem_.select_examples({});
  problem_.keep_messages();
  problem_.set_theta(theta);
  double change = 0;
  sweep_to_tolerance(problem_, config_.inference_sweeps, config_.inference_tol, change,
                     [](int, double) {});
  problem_.resolve_kinks();
  double sums[1] = {problem_.objective() - problem_.ground_truth_score()};
  comm_.allreduce_sum(std::span<double>(sums));
  problem_.restore_messages();
  return sums[0] + 0.5 * config_.C * dot(theta, theta);
}

std::string DlpwOracle::objective_note() const {
  return exact_ ? "F_0 exactly, by the LP oracle"
                : "F from above: every example's messages swept to --inference-tol (at most "
                  "--inference-sweeps) at the averaged theta";
}

}  // namespace pdsp
