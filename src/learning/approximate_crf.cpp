#include "pdsp/learning/approximate_crf.hpp"

#include <omp.h>

#include <algorithm>

#include "pdsp/data/errors.hpp"
#include "pdsp/learning/non_finite_report.hpp"

namespace pdsp {

ApproximateInference parse_inference(const std::string& text) {
  if (text == "lbp") return ApproximateInference::LoopyBp;
  if (text == "mean-field") return ApproximateInference::MeanField;
  throw InputError("inference '" + text + "' is not one of lbp, mean-field");
}

std::string inference_name(ApproximateInference inference) {
  return inference == ApproximateInference::LoopyBp ? "lbp" : "mean-field";
}

ApproximateCrf::ApproximateCrf(const Dataset& data, ApproximateInference inference, int max_sweeps,
                               double tol)
    : data_(data),
      inference_(inference),
      max_sweeps_(max_sweeps),
      tol_(tol),
      graph_(data),
      bethe_(make_counting_numbers(data, graph_, CountingMode::Bethe, data.source())),
      bp_(data, graph_, bethe_, 1.0),
      mean_field_(data, graph_),
      features_(data),
      potential_(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0.0),
      lambda_(static_cast<size_t>(graph_.num_message_entries()), 0.0),
      belief_(potential_.size(), 0.0),
      per_example_(static_cast<size_t>(data.num_examples()), 0.0) {
  reset();
  for (int t = 0; t < omp_get_max_threads(); ++t) workspaces_.emplace_back(graph_);
}

void ApproximateCrf::reset() {
  for (int64_t n = 0; n < data_.num_examples(); ++n) mean_field_.reset(n, belief_.data());
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
}

void ApproximateCrf::set_theta(std::span<const double> theta) {
  theta_.assign(theta.begin(), theta.end());
  features_.potentials(theta, {}, potential_);
}

void ApproximateCrf::set_example_theta(int64_t n, std::span<const double> theta) {
  theta_.assign(theta.begin(), theta.end());
  features_.example_potentials(n, theta, {}, potential_);
}

double ApproximateCrf::infer(int64_t n, Workspace& w) {
  if (inference_ == ApproximateInference::MeanField)
    return mean_field_.infer(n, potential_.data(), belief_.data(), max_sweeps_, tol_, w);
  for (int sweep = 0; sweep < max_sweeps_; ++sweep)
    if (bp_.sweep_example(n, potential_.data(), lambda_.data(), w) <= tol_) break;
  // At a fixed point of BP the Bethe objective approximates log Z.
  return bp_.example_beliefs(n, potential_.data(), lambda_.data(), nullptr, belief_.data(), w)
      .objective;
}

double ApproximateCrf::infer(int64_t n) {
  return infer(n, workspaces_[0]);
}

double ApproximateCrf::infer_all() {
  const int64_t examples = data_.num_examples();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t n = 0; n < examples; ++n)
    per_example_[n] = infer(n, workspaces_[omp_get_thread_num()]);
  require_finite();
  double total = 0.0;
  for (double x : per_example_) total += x;
  return total;
}

// Inference to convergence costs far more than these scans.
void ApproximateCrf::require_finite() const {
  const bool finite = all_finite(potential_) && all_finite(lambda_) && all_finite(belief_);
  run_collectively(data_.communicator(), [&] {
    if (!finite) throw InputError(data_.source() + ": " + explain_non_finite());
  });
}

std::string ApproximateCrf::explain_non_finite() const {
  const PotentialSource u{data_, theta_, {}, potential_};
  const int64_t potential = first_non_finite(potential_);
  if (potential >= 0) return describe_potential(u, potential);
  const std::string cause = describe_largest_potential(u, 1.0);
  const int64_t message = first_non_finite(lambda_);
  if (message >= 0) return describe_message(data_, graph_, lambda_, message) + ": " + cause;
  return describe_belief(data_, belief_, first_non_finite(belief_)) + ": " + cause;
}

void ApproximateCrf::ground_truth_moments(std::span<double> d) const {
  pdsp::ground_truth_moments(data_, graph_, d);
}

}  // namespace pdsp
