#include "pdsp/learning/non_finite_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Position i of the potential layout as a region of the file: the feature rows and the typed
// part it reads, and the words that name it.
struct Region {
  const SparseRows* rows;
  int64_t row;
  const RegionTypes* types;
  int64_t index;      // the variable or factor, in the slice
  int64_t state;      // its state or joint state
  std::string group;  // "/vars" or "/factors"
  std::string name;   // "variable 17 state 1"
};

Region region_of(const Dataset& data, int64_t i) {
  if (i < data.num_states()) {
    const int64_t v = std::upper_bound(data.state_offset.begin(), data.state_offset.end(), i) -
                      data.state_offset.begin() - 1;
    const int64_t s = i - data.state_offset[v];
    return {&data.var_features,
            i,
            &data.var_types,
            v,
            s,
            "/vars",
            "variable " + std::to_string(data.file_var(v)) + " state " + std::to_string(s)};
  }
  const int64_t t = i - data.num_states();
  const int64_t a = std::upper_bound(data.table_offset.begin(), data.table_offset.end(), t) -
                    data.table_offset.begin() - 1;
  const int64_t s = t - data.table_offset[a];
  return {&data.factor_features,
          t,
          &data.factor_types,
          a,
          s,
          "/factors",
          "factor " + std::to_string(data.file_factor(a)) + " joint state " + std::to_string(s)};
}

// A term theta[param] * value of a potential, and the words that name its feature value.
struct Term {
  double size = -1;  // |theta[param] * value|, infinity when not finite
  int64_t param = -1;
  double value = 0;
  std::string feature;  // "/vars/feat_value[35]"
};

void keep_larger(Term& largest, std::span<const double> theta, int64_t param, double value,
                 const std::function<std::string()>& feature) {
  const double term = std::abs(theta[param] * value);
  const double size = std::isfinite(term) ? term : INFINITY;
  if (size > largest.size) largest = {size, param, value, feature()};
}

// The term of largest magnitude (a non-finite one first) of a position: where an overflow
// comes from.
Term largest_term(const Dataset& data, const Region& region, std::span<const double> theta) {
  Term largest;
  if (theta.empty()) return largest;
  const SparseRows& rows = *region.rows;
  for (int64_t k = rows.ptr[region.row]; k < rows.ptr[region.row + 1]; ++k)
    keep_larger(largest, theta, rows.param[k], rows.value[k], [&] {
      return region.group + "/feat_value[" + std::to_string(rows.first_nnz + k) + "]";
    });
  const RegionTypes& types = *region.types;
  const int32_t k = types.present ? types.type[region.index] : -1;
  if (k < 0) return largest;
  const int64_t block = types.param_offset[k] + region.state * std::max(types.dim[k], 1);
  if (types.dim[k] == 0) {
    keep_larger(largest, theta, block, 1.0, [&] {
      return "1 (the shared table of type " + std::to_string(k) + " in " + region.group + "/type)";
    });
    return largest;
  }
  const ObservationRows& obs = data.observations;
  const LocalIndex row = types.obs_row[region.index];
  for (int64_t e = obs.ptr[row]; e < obs.ptr[row + 1]; ++e)
    keep_larger(largest, theta, block + obs.index[e], obs.value_at(e),
                [&] { return "/obs/value[" + std::to_string(obs.first_nnz + e) + "]"; });
  return largest;
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
  const Term largest = largest_term(u.data, region, u.theta);
  const bool has_loss = position < u.data.num_states() && !u.loss.empty();
  if (has_loss && !(std::abs(u.loss[position]) < largest.size))
    return text + " (its loss term, the loss times --loss-weight, is " +
           number_text(u.loss[position]) + ")";
  if (largest.param < 0) return text;
  return text + " (its largest term is theta[" + std::to_string(largest.param) +
         "] = " + number_text(u.theta[largest.param]) + " times " + largest.feature + " = " +
         number_text(largest.value) + ")";
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
  return "the message between factor " + std::to_string(data.file_factor(graph.factor_of(low))) +
         " and variable " + std::to_string(data.file_var(data.factor_vars[low])) + " is " +
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
