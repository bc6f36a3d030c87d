#include "pdsp/learning/non_finite_report.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/data/errors.hpp"

namespace pdsp {
namespace {

// Position i of the potential layout as a region of the file: the feature rows it reads and the
// words that name it.
struct Region {
  const SparseRows* rows;
  int64_t row;
  std::string group;  // "/vars" or "/factors"
  std::string name;   // "variable 17 state 1"
};

Region region_of(const Dataset& data, int64_t i) {
  if (i < data.num_states()) {
    const int64_t v = std::upper_bound(data.state_offset.begin(), data.state_offset.end(), i) -
                      data.state_offset.begin() - 1;
    return {&data.var_features, i, "/vars",
            "variable " + std::to_string(data.first_var + v) + " state " +
                std::to_string(i - data.state_offset[v])};
  }
  const int64_t t = i - data.num_states();
  const int64_t a = std::upper_bound(data.table_offset.begin(), data.table_offset.end(), t) -
                    data.table_offset.begin() - 1;
  return {&data.factor_features, t, "/factors",
          "factor " + std::to_string(data.first_factor + a) + " joint state " +
              std::to_string(t - data.table_offset[a])};
}

}  // namespace

bool all_finite(std::span<const double> values) {
  const auto n = static_cast<int64_t>(values.size());
  int64_t non_finite = 0;
#pragma omp simd reduction(+ : non_finite)
  for (int64_t i = 0; i < n; ++i) non_finite += !std::isfinite(values[i]);
  return non_finite == 0;
}

int64_t first_non_finite(std::span<const double> values) {
  const auto bad =
      std::find_if(values.begin(), values.end(), [](double x) { return !std::isfinite(x); });
  return bad == values.end() ? -1 : bad - values.begin();
}

std::string describe_potential(const PotentialSource& u, int64_t position) {
  const Region region = region_of(u.data, position);
  std::string text =
      "the potential of " + region.name + " is " + number_text(u.potential[position]);
  // The term of largest magnitude (a non-finite one first) is where the overflow comes from.
  const SparseRows& rows = *region.rows;
  int64_t largest = -1;
  double largest_size = -1;
  const int64_t end = u.theta.empty() ? rows.ptr[region.row] : rows.ptr[region.row + 1];
  for (int64_t k = rows.ptr[region.row]; k < end; ++k) {
    const double term = std::abs(u.theta[rows.param[k]] * rows.value[k]);
    const double size = std::isfinite(term) ? term : INFINITY;
    if (size > largest_size) {
      largest_size = size;
      largest = k;
    }
  }
  const bool has_loss = position < u.data.num_states() && !u.loss.empty();
  if (has_loss && !(std::abs(u.loss[position]) < largest_size))
    return text + " (its loss term, the loss times --loss-weight, is " +
           number_text(u.loss[position]) + ")";
  if (largest < 0) return text;
  const int32_t r = rows.param[largest];
  return text + " (its largest term is theta[" + std::to_string(r) +
         "] = " + number_text(u.theta[r]) + " times " + region.group + "/feat_value[" +
         std::to_string(rows.first_nnz + largest) + "] = " + number_text(rows.value[largest]) + ")";
}

std::string describe_message(const Dataset& data, const FactorGraph& graph,
                             std::span<const double> arena, int64_t entry) {
  // The slot whose message block holds the entry: message offsets increase with the slot.
  int64_t low = 0, high = graph.num_slots() - 1;
  while (low < high) {
    const int64_t mid = low + (high - low + 1) / 2;
    if (graph.message_offset(mid) <= entry)
      low = mid;
    else
      high = mid - 1;
  }
  return "the message between factor " + std::to_string(data.first_factor + graph.factor_of(low)) +
         " and variable " + std::to_string(data.first_var + data.factor_vars[low]) + " is " +
         number_text(arena[entry]) + " after the sweeps";
}

std::string describe_belief(const Dataset& data, std::span<const double> belief, int64_t position) {
  return "the belief of " + region_of(data, position).name + " is " +
         number_text(belief[position]) + " after the sweeps";
}

std::string describe_largest_potential(const PotentialSource& u, double epsilon) {
  const std::string scale =
      "the potentials are too large for double precision at epsilon = " + number_text(epsilon);
  if (u.potential.empty()) return scale;
  const auto largest =
      std::max_element(u.potential.begin(), u.potential.end(),
                       [](double a, double b) { return std::abs(a) < std::abs(b); });
  return scale + "; the largest: " + describe_potential(u, largest - u.potential.begin());
}

}  // namespace pdsp
