// LocalProblem's terms of the ground truth and of the potential offset: d, the ground-truth
// score and the offset's part of it (design.md §2), through the potential model.
#include <algorithm>
#include <stdexcept>

#include "pdsp/data/allocation.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {

void LocalProblem::ground_truth_moments(std::span<double> d) const {
  if (!truth_moments_.empty())
    std::copy(truth_moments_.begin(), truth_moments_.end(), d.begin());
  else
    engine_.ground_truth_moments(d, selected_);
}

void LocalProblem::set_truth_moments(std::vector<double> d) {
  if (!d.empty() && (!engine_.model().is_linear() || !selected_.empty() ||
                     static_cast<int64_t>(d.size()) != num_params()))
    throw std::logic_error("set_truth_moments: a linear model, no selection, one per parameter");
  truth_moments_ = std::move(d);
}

void LocalProblem::keep_truth_moments() {
  if (!engine_.model().is_linear() || !data_.has_labels()) return;
  std::vector<double> d(static_cast<size_t>(num_params()));
  engine_.ground_truth_moments(d);
  set_truth_moments(std::move(d));
}

void LocalProblem::moments_less_truth(std::span<double> z) const {
  if (!truth_moments_.empty()) {
    model_moments(z);
    for (size_t r = 0; r < z.size(); ++r) z[r] -= truth_moments_[r];
    return;
  }
  const std::span<const double> truth = engine_.truth_weight();
  if (truth.size() != belief_.size() ||
      (kernels_ == &general_ && engine_.model().is_linear() && selected_.empty())) {
    // Folded shared-table beliefs (a linear model on the general kernels over all examples;
    // a selection reads no shared table) have no dense layout to subtract from: two passes.
    model_moments(z);
    std::vector<double> d(z.size());
    ground_truth_moments(d);
    for (size_t r = 0; r < z.size(); ++r) z[r] -= d[r];
    return;
  }
  belief_less_truth_.resize(belief_.size());
  if (selected_.empty()) {
    for (size_t i = 0; i < belief_.size(); ++i)
      belief_less_truth_[i] = belief_.data()[i] - truth[i];
    engine_.model().backward(engine_.theta(), belief_less_truth_, z);
    return;
  }
  // The selected examples' positions only: a stochastic learner's visit costs its examples.
  const auto subtract = [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) belief_less_truth_[i] = belief_.data()[i] - truth[i];
  };
  std::fill(z.begin(), z.end(), 0.0);
  const int64_t states = data_.num_states();
  for (int64_t n : selected_) {
    subtract(data_.state_offset[data_.var_offset[n]], data_.state_offset[data_.var_offset[n + 1]]);
    subtract(states + data_.table_offset[data_.factor_offset[n]],
             states + data_.table_offset[data_.factor_offset[n + 1]]);
    engine_.model().add_backward_example(n, engine_.theta(), belief_less_truth_, z);
  }
}

double LocalProblem::ground_truth_offset() const {
  double sum = 0.0;
  if (selected_.empty())
    for (double part : truth_offset_) sum += part;
  else if (!truth_offset_.empty())
    for (int64_t n : selected_) sum += truth_offset_[n];
  return sum;
}

double LocalProblem::ground_truth_score() const {
  if (engine_.model().is_linear()) {
    // Some tables may be unwritten (unwritten_factors_): theta . d reads none.
    std::vector<double> d(static_cast<size_t>(num_params()));
    ground_truth_moments(d);
    return dot(engine_.theta(), d) + ground_truth_offset();
  }
  // A nonlinear model writes every table (unwritten_factors_ is empty): the score is read off
  // the potentials at the labelled positions, less the loss.
  const std::span<const double> weight = engine_.truth_weight();
  const ZeroedArray<double>& potential = engine_.potential_array();
  const int64_t states = data_.num_states();
  double score = 0.0;
  const auto add_example = [&](int64_t n) {
    for (int64_t i = data_.state_offset[data_.var_offset[n]];
         i < data_.state_offset[std::min(data_.var_offset[n + 1], data_.owned_vars())]; ++i)
      if (weight[i] != 0.0) score += potential[i] - (loss_.empty() ? 0.0 : loss_[i]);
    for (int64_t t = data_.table_offset[data_.factor_offset[n]];
         t < data_.table_offset[std::min(data_.factor_offset[n + 1], data_.owned_factors())]; ++t)
      if (weight[states + t] != 0.0) score += potential[states + t];
  };
  if (selected_.empty())
    for (int64_t n = 0; n < data_.num_examples(); ++n) add_example(n);
  else
    for (int64_t n : selected_) add_example(n);
  return score;
}

void LocalProblem::set_potential_offset(std::span<const double> offset) {
  if (offset.empty()) {
    offset_base_ = {};
    truth_offset_ = {};
    largest_base_ = largest_magnitude(loss_);
    return;
  }
  if (static_cast<int64_t>(offset.size()) != data_.num_states())
    throw std::invalid_argument("set_potential_offset: " + std::to_string(offset.size()) +
                                " values for " + std::to_string(data_.num_states()) + " states");
  if (offset_base_.empty())
    offset_base_ = allocate_vector<double>(
        settings_.source, "the potential offset (" + std::to_string(offset.size()) + " states)",
        static_cast<int64_t>(offset.size()));
  for (size_t i = 0; i < offset.size(); ++i)
    offset_base_[i] = (i < loss_.size() ? loss_[i] : 0.0) + offset[i];
  largest_base_ = largest_magnitude(offset_base_);
  // The offset lies on the states only: its ground-truth part is each owned variable's offset at
  // its label (none without labels, as in prediction).
  truth_offset_.assign(static_cast<size_t>(data_.num_examples()), 0.0);
  if (!data_.has_labels()) return;
  for (int64_t n = 0; n < data_.num_examples(); ++n)
    for (int64_t v = data_.var_offset[n]; v < std::min(data_.var_offset[n + 1], data_.owned_vars());
         ++v)
      if (data_.label[v] >= 0) truth_offset_[n] += offset[data_.state_offset[v] + data_.label[v]];
}

}  // namespace pdsp
