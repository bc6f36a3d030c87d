// LocalProblem's selection of examples: the plans that sweeps and evaluations run over a subset.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "pdsp/learning/local_problem.hpp"

namespace pdsp {

// Costs the size of the old and the new selection, not of the rank's data: a stochastic learner
// selects one example after the other.
void LocalProblem::select_examples(std::span<const int64_t> examples) {
  if (!examples.empty() && data_.shard)
    throw std::logic_error("select_examples: a shard of a split example sweeps all of it");
  selected_.clear();
  if (examples.empty()) return;
  if (example_selected_.empty())
    example_selected_.assign(static_cast<size_t>(data_.num_examples()), 0);
  for (int64_t n : examples) {
    if (n < 0 || n >= data_.num_examples() || example_selected_[n]) {
      for (int64_t m : selected_) example_selected_[m] = 0;
      selected_.clear();
      throw std::invalid_argument("select_examples: example " + std::to_string(n) +
                                  " is out of range or repeated");
    }
    example_selected_[n] = 1;
    selected_.push_back(n);
  }
  for (int64_t n : selected_) example_selected_[n] = 0;
  selected_sweep_plan_ = plan_sweep(colouring_, graph_, selected_);
  selected_evaluation_plan_ = plan_evaluation(data_, selected_);
  const int64_t chunks =
      std::max(selected_sweep_plan_.num_chunks(), selected_evaluation_plan_.num_chunks());
  if (chunks > static_cast<int64_t>(chunk_value_.size()))
    chunk_value_.resize(static_cast<size_t>(chunks));
  // Every chunk of a rank without shards counts.
  if (selected_evaluation_plan_.num_chunks() > static_cast<int64_t>(chunk_terms_.size())) {
    chunk_terms_.resize(static_cast<size_t>(selected_evaluation_plan_.num_chunks()));
    chunk_beliefs_finite_.resize(chunk_terms_.size(), 1);
    chunk_counted_.resize(chunk_terms_.size(), 1);
  }
}

}  // namespace pdsp
