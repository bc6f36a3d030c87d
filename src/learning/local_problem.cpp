#include "pdsp/learning/local_problem.hpp"

#include <omp.h>

#include <algorithm>

#include "pdsp/data/errors.hpp"

namespace pdsp {
namespace {

std::vector<double> make_loss(const Dataset& data, const ProblemSettings& settings) {
  if (settings.loss_augmented && !data.has_labels())
    throw InputError(settings.source + ": /vars/label: training needs ground-truth labels");
  if (!settings.loss_augmented || settings.loss_weight == 0.0) return {};
  std::vector<double> loss(static_cast<size_t>(data.num_states()));
  for (int64_t v = 0; v < data.num_vars(); ++v)
    for (int64_t s = 0; s < data.card[v]; ++s) {
      const int64_t i = data.state_offset[v] + s;
      const double base =
          data.var_loss.empty() ? (s != data.label[v] ? 1.0 : 0.0) : data.var_loss[i];
      loss[i] = settings.loss_weight * base;
    }
  return loss;
}

// At eps = 0 every smax is a max and F no longer depends on the counting numbers, but they still
// weight the block update: with a negative c_v (Bethe) the weights c_a / chat_v sum to more than
// one and the update stops minimising F (design.md §3).
void require_max_product_counting(const Dataset& data, const CountingNumbers& c,
                                  const std::string& source) {
  for (size_t a = 0; a < c.factor.size(); ++a)
    if (!(c.factor[a] > 0))
      throw InputError(source + ": /factors/counting[" +
                       std::to_string(data.first_factor + static_cast<int64_t>(a)) +
                       "]: --epsilon 0 needs every c_a > 0 (use --counting uniform)");
  for (size_t v = 0; v < c.var.size(); ++v)
    if (c.var[v] < 0)
      throw InputError(source + ": /vars/counting[" +
                       std::to_string(data.first_var + static_cast<int64_t>(v)) +
                       "]: --epsilon 0 needs every c_v >= 0 (" + counting_mode_name(c.mode) +
                       " gives " + std::to_string(c.var[v]) + "; use --counting uniform)");
}

}  // namespace

LocalProblem::LocalProblem(const Dataset& data, const ProblemSettings& settings)
    : data_(data),
      settings_(settings),
      graph_(data),
      counting_(make_counting_numbers(data, graph_, settings.counting, settings.source)),
      kernels_(data, graph_, counting_, settings.epsilon),
      features_(data),
      loss_(make_loss(data, settings)),
      potential_(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0.0),
      lambda_(static_cast<size_t>(graph_.num_message_entries()), 0.0),
      belief_(potential_.size(), 0.0),
      per_example_(static_cast<size_t>(data.num_examples()), 0.0) {
  if (settings.epsilon == 0.0) require_max_product_counting(data, counting_, settings.source);
  workspaces_.reserve(static_cast<size_t>(omp_get_max_threads()));
  for (int t = 0; t < omp_get_max_threads(); ++t) workspaces_.emplace_back(graph_);
}

bool LocalProblem::is_saddle_problem() const {
  const auto negative = [](double c) { return c < 0; };
  return settings_.epsilon > 0 &&
         (std::any_of(counting_.var.begin(), counting_.var.end(), negative) ||
          std::any_of(counting_.factor.begin(), counting_.factor.end(), negative));
}

template <class PerExample>
void LocalProblem::for_each_example(PerExample&& work) {
  const int64_t examples = data_.num_examples();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t n = 0; n < examples; ++n) work(n, workspaces_[omp_get_thread_num()]);
}

double LocalProblem::sum_in_order() const {
  double total = 0.0;
  for (double x : per_example_) total += x;
  return total;
}

void LocalProblem::set_theta(std::span<const double> theta) {
  compute_potentials(data_, theta, loss_, potential_);
}

double LocalProblem::sweep(int count) {
  for (int i = 0; i < count; ++i)
    for_each_example([&](int64_t n, Workspace& w) {
      per_example_[n] = kernels_.sweep_example(n, potential_.data(), lambda_.data(), w);
    });
  return per_example_.empty() ? 0.0 : *std::max_element(per_example_.begin(), per_example_.end());
}

void LocalProblem::resolve_kinks() {
  if (!kernels_.has_kinks()) return;
  for_each_example([&](int64_t n, Workspace& w) {
    kernels_.resolve_kinks_example(n, potential_.data(), lambda_.data(), w);
  });
}

double LocalProblem::objective() {
  for_each_example([&](int64_t n, Workspace& w) {
    per_example_[n] = kernels_.example_objective(n, potential_.data(), lambda_.data(), w);
  });
  return sum_in_order();
}

LocalEvaluation LocalProblem::evaluate() {
  std::vector<ExampleTerms> terms(static_cast<size_t>(data_.num_examples()));
  for_each_example([&](int64_t n, Workspace& w) {
    terms[n] = kernels_.example_beliefs(n, potential_.data(), lambda_.data(),
                                        loss_.empty() ? nullptr : loss_.data(), belief_.data(), w);
  });
  LocalEvaluation result;
  for (const ExampleTerms& t : terms) {
    result.objective += t.objective;
    result.dual += t.dual;
    result.violation = std::max(result.violation, t.violation);
  }
  return result;
}

void LocalProblem::ground_truth_moments(std::span<double> d) const {
  features_.moments(ground_truth_weights(data_, graph_), d);
}

}  // namespace pdsp
