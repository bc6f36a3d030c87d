#include "pdsp/learners/likelihood/likelihood.hpp"

#include <algorithm>

#include "pdsp/util/errors.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {
namespace {

// An example's approximate NLL below this (relative to its log Z) counts as negative, not as
// round-off.
constexpr double kNegativeNll = 1e-9;

}  // namespace

Likelihood::Likelihood(ApproximateCrf& crf, double C, Communicator& comm)
    : crf_(crf),
      regularizer_{C, 2.0},
      comm_(comm),
      params_(static_cast<size_t>(crf.data().num_params)) {
  const std::span<const double> truth = crf_.truth_weight();
  negative_truth_.assign(truth.begin(), truth.end());
  for (double& w : negative_truth_) w = -w;
  d_.resize(params_);
  crf_.ground_truth_moments(d_);
  comm_.allreduce_sum(std::span<double>(d_));
  int64_t variables[1] = {crf.data().num_vars()};
  comm.allreduce_sum(std::span<int64_t>(variables));
  variables_ = static_cast<double>(std::max<int64_t>(variables[0], 1));
}

Evaluation Likelihood::evaluate(std::span<const double> theta, std::span<double> grad,
                                Starts starts) {
  crf_.restore();
  crf_.set_theta(theta);
  const bool all = starts != Starts::Trial;
  const bool anneal_all = starts == Starts::AllAnnealed;
  std::vector<int> chosen;
  InferenceSummary summary = crf_.infer_all_best_start(
      chosen, anneal_all, ApproximateCrf::CurrentState::Warm,
      all ? ApproximateCrf::StartSet::All : ApproximateCrf::StartSet::PulledTowardsStates);
  const std::vector<double> truth = crf_.truth_scores();
  // Per example, the log Z its NLL is checked against: the fixed point a trial kept, or the best
  // of prediction's starts (the warm start can only raise it).
  const std::span<const double> checked = all ? crf_.cold_log_z() : crf_.example_log_z();
  const auto negative = [&](size_t n) {
    return checked[n] - truth[n] < -kNegativeNll * (1 + std::abs(checked[n]));
  };
  if (all) {
    // With anneal_all every example has tried the annealed start already.
    std::vector<char> missed(truth.size());
    for (size_t n = 0; n < truth.size(); ++n) missed[n] = !anneal_all && negative(n);
    // Every rank calls it, with or without examples to anneal: it checks the beliefs
    // collectively.
    summary = crf_.anneal_where(missed, chosen);
  }
  std::vector<double> sums(params_ + 3, 0.0);
  double lowest = INFINITY;
  for (size_t n = 0; n < truth.size(); ++n) {
    lowest = std::min(lowest, checked[n] - truth[n]);
    if (negative(n)) sums[params_ + 2] += 1;
  }
  crf_.moments(std::span<double>(sums).first(params_));
  sums[params_] = summary.log_z;
  sums[params_ + 1] = static_cast<double>(summary.unconverged);
  double negated_lowest[1] = {-lowest};
  comm_.allreduce(sums, negated_lowest);
  Evaluation e;
  e.unconverged = static_cast<int64_t>(sums[params_ + 1]);
  e.negative = static_cast<int64_t>(sums[params_ + 2]);
  e.lowest_nll = -negated_lowest[0];
  for (size_t r = 0; r < params_; ++r) grad[r] = sums[r] - d_[r];
  regularizer_.add_gradient(theta, grad);
  for (size_t r = 0; r < params_; ++r) grad[r] /= variables_;
  const double value = sums[params_] - dot(d_, theta) + regularizer_.value(theta);
  e.value = value / variables_;
  if (!std::isfinite(e.value))
    throw CollectiveError(crf_.data().source() +
                              ": the likelihood baseline diverged (L = " + number_text(value) + ")",
                          comm_.is_root());
  e.valid = e.unconverged == 0 && e.negative == 0;
  return e;
}

void Likelihood::example_gradient(int64_t global, std::span<const double> theta,
                                  std::span<double> grad) {
  std::fill(grad.begin(), grad.end(), 0.0);
  const Dataset& data = crf_.data();
  const int64_t k = global - data.first_example;
  if (k >= 0 && k < data.num_examples()) {
    crf_.set_example_theta(k, theta);
    crf_.infer(k);
    crf_.add_example_moments(k, crf_.beliefs(), grad);
    crf_.add_example_moments(k, negative_truth_, grad);
  }
  comm_.allreduce_sum(grad);
  const double share = 1.0 / static_cast<double>(data.file_examples);
  Regularizer{share * regularizer_.C, regularizer_.p}.add_gradient(theta, grad);
}

}  // namespace pdsp
