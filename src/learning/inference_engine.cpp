#include "pdsp/learning/inference_engine.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/features/feature_index.hpp"
#include "pdsp/learning/non_finite_report.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/huge_pages.hpp"

namespace pdsp {
namespace {

// Potentials below this cannot overflow in the sums of their rows: far enough below the
// largest double (1.8e308) for any rounding.
constexpr double kSafeMagnitude = 1e300;

}  // namespace

InferenceEngine::InferenceEngine(const Dataset& data, const EngineSettings& settings,
                                 std::unique_ptr<const PotentialModel> model)
    : data_(data),
      source_(settings.source),
      graph_(data, settings.source),
      counting_(make_counting_numbers(data, graph_, settings.counting, settings.source,
                                      settings.epsilon)),
      general_(data, graph_, counting_, settings.temperature),
      model_(model ? std::move(model) : std::make_unique<FeatureIndex>(data)),
      potential_(allocate_zeroed<double>(
          settings.source,
          "the potentials (" + std::to_string(data.num_states() + data.num_table_entries()) +
              " states and table entries)",
          data.num_states() + data.num_table_entries())) {
  reserve_on_huge_pages(theta_, static_cast<size_t>(model_->num_params()));
}

void InferenceEngine::set_theta(std::span<const double> theta, std::span<const double> base,
                                double largest_base, std::span<const uint8_t> skip_factor) {
  theta_.assign(theta.begin(), theta.end());
  model_->forward(theta, base, potential_, skip_factor);
  // No potential exceeds max |base| + the model's bound on its terms: when that is far inside
  // the range of doubles, none can have overflowed, and the potentials (many more than the
  // parameters) need no scan.
  const double bound = largest_base + model_->largest_term(theta);
  potentials_bounded_ = all_finite(theta) && bound < kSafeMagnitude;
  potentials_finite_ = potentials_bounded_ || all_finite(potential_);
}

void InferenceEngine::set_example_theta(int64_t n, std::span<const double> theta,
                                        std::span<const double> base) {
  theta_.assign(theta.begin(), theta.end());
  model_->forward_example(n, theta, base, potential_);
}

void InferenceEngine::set_examples_theta(std::span<const int64_t> examples,
                                         std::span<const double> theta,
                                         std::span<const double> base, double largest_base) {
  theta_.assign(theta.begin(), theta.end());
  for (int64_t n : examples) model_->forward_example(n, theta, base, potential_);
  const double bound = largest_base + model_->largest_term(theta);
  potentials_bounded_ = all_finite(theta) && bound < kSafeMagnitude;
  const std::span<const double> u(potential_);
  const auto example_finite = [&](int64_t n) {
    const int64_t states = data_.state_offset[data_.var_offset[n]];
    const int64_t tables = data_.num_states() + data_.table_offset[data_.factor_offset[n]];
    return all_finite(u.subspan(states, data_.state_offset[data_.var_offset[n + 1]] - states)) &&
           all_finite(u.subspan(
               tables,
               data_.num_states() + data_.table_offset[data_.factor_offset[n + 1]] - tables));
  };
  potentials_finite_ =
      potentials_bounded_ || std::all_of(examples.begin(), examples.end(), example_finite);
}

const GroundTruth& InferenceEngine::ground_truth() const {
  if (!ground_truth_) {
    if (!data_.has_labels())
      throw InputError(source_ + ": /vars/label: the ground truth needs labels");
    ground_truth_ = pdsp::ground_truth(data_, graph_);
  }
  return *ground_truth_;
}

std::span<const double> InferenceEngine::truth_weight() const {
  if (truth_weight_.empty()) truth_weight_ = ground_truth().indicator();
  return {truth_weight_.data(), truth_weight_.size()};
}

void InferenceEngine::ground_truth_moments(std::span<double> d,
                                           std::span<const int64_t> examples) const {
  if (examples.empty()) {
    model_->backward_truth(theta_, ground_truth(), d);
    return;
  }
  std::fill(d.begin(), d.end(), 0.0);
  for (int64_t n : examples) model_->add_backward_example(n, theta_, truth_weight(), d);
}

}  // namespace pdsp
