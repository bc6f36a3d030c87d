#include "pdsp/learning/nonlocal_energy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace pdsp {
namespace {

double shape_value(CountShape shape, double z) {
  switch (shape) {
    case CountShape::SmoothedHinge:
      return z <= 0 ? 0.0 : z < 1 ? 0.5 * z * z : z - 0.5;
    case CountShape::Squared:
      return 0.5 * z * z;
    case CountShape::Linear:
      return z;
  }
  return 0.0;
}

double shape_slope(CountShape shape, double z) {
  switch (shape) {
    case CountShape::SmoothedHinge:
      return z <= 0 ? 0.0 : z < 1 ? z : 1.0;
    case CountShape::Squared:
      return z;
    case CountShape::Linear:
      return 1.0;
  }
  return 0.0;
}

double sign(double x) {
  return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

// The state counts of the word closest to `counts` in L1 (L^u), and that distance; the lower
// index on a tie.
std::vector<double> closest_unigram(const NonlocalTerms& terms, const std::vector<double>& counts,
                                    double& distance) {
  std::vector<double> closest, word(counts.size());
  distance = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < terms.num_words(); ++i) {
    std::fill(word.begin(), word.end(), 0.0);
    for (int64_t k = terms.word_ptr[i]; k < terms.word_ptr[i + 1]; ++k)
      word[terms.word_state[k]] += 1.0;
    double d = 0.0;
    for (size_t s = 0; s < counts.size(); ++s) d += std::abs(word[s] - counts[s]);
    if (d < distance) distance = d, closest = word;
  }
  return closest;
}

// An example without an instance, where no dictionary term applies, has no term; its variables
// may have any number of states (the reader checks only those under a term).
bool has_terms(const NonlocalTerms& terms, int64_t n) {
  return terms.count_offset[n] < terms.count_offset[n + 1] || terms.unigram || terms.position;
}

}  // namespace

TermSlopes term_slopes(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                       std::span<const double> belief, std::span<double> unit_values) {
  const int32_t K = terms.num_states;
  const int64_t first = data.var_offset[n], end = data.var_offset[n + 1];
  const int64_t length = end - first;
  if (!has_terms(terms, n)) return {};
  for (int64_t v = first; v < end; ++v)
    if (data.card[v] != K)
      throw std::logic_error("non-local terms of " + std::to_string(K) + " states on variable " +
                             std::to_string(v) + " of " + std::to_string(data.card[v]));
  const auto mu = [&](int64_t v, int32_t s) { return belief[data.state_offset[v] + s]; };
  std::vector<double> counts(static_cast<size_t>(K), 0.0);
  for (int64_t v = first; v < end; ++v)
    for (int32_t s = 0; s < K; ++s) counts[s] += mu(v, s);

  TermSlopes slopes;
  for (int64_t i = terms.count_offset[n]; i < terms.count_offset[n + 1]; ++i) {
    const int32_t j = terms.count_template[i];
    const double* a = terms.count_a.data() + int64_t{j} * K;
    double z = terms.count_b[j];
    for (int32_t s = 0; s < K; ++s) z += a[s] * counts[s];
    if (!unit_values.empty()) unit_values[j] += shape_value(terms.count_shape[j], z);
    slopes.instance.push_back(shape_slope(terms.count_shape[j], z));
  }
  const int64_t templates = terms.num_templates();
  if (terms.unigram && terms.num_words() > 0) {
    double distance = 0.0;
    const std::vector<double> word_counts = closest_unigram(terms, counts, distance);
    if (!unit_values.empty()) unit_values[templates] += distance;
    for (int32_t s = 0; s < K; ++s) slopes.unigram.push_back(sign(counts[s] - word_counts[s]));
  }
  if (terms.position) {
    // |w_i - mu|_1 for the words of the example's length; the closest one.
    int64_t best = -1;
    double best_distance = std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < terms.num_words(); ++i) {
      if (terms.word_ptr[i + 1] - terms.word_ptr[i] != length) continue;
      double distance = 0.0;
      for (int64_t p = 0; p < length; ++p)
        for (int32_t s = 0; s < K; ++s)
          distance += std::abs((terms.word_state[terms.word_ptr[i] + p] == s ? 1.0 : 0.0) -
                               mu(first + p, s));
      if (distance < best_distance) best = i, best_distance = distance;
    }
    if (best >= 0) {
      if (!unit_values.empty()) unit_values[templates + 1] += best_distance;
      for (int64_t p = 0; p < length; ++p)
        for (int32_t s = 0; s < K; ++s) {
          const double w = terms.word_state[terms.word_ptr[best] + p] == s ? 1.0 : 0.0;
          slopes.position.push_back(sign(mu(first + p, s) - w));
        }
    }
  }
  return slopes;
}

void add_weighted_slopes(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                         std::span<const double> psi, const TermSlopes& slopes,
                         std::span<double> out) {
  if (!has_terms(terms, n)) return;
  const int32_t K = terms.num_states;
  const int64_t first = data.var_offset[n], end = data.var_offset[n + 1];
  // The terms on U(mu) have the same slope on every variable of the example.
  std::vector<double> count_slope(static_cast<size_t>(K), 0.0);
  for (size_t i = 0; i < slopes.instance.size(); ++i) {
    const int32_t j = terms.count_template[terms.count_offset[n] + static_cast<int64_t>(i)];
    const double* a = terms.count_a.data() + int64_t{j} * K;
    for (int32_t s = 0; s < K; ++s) count_slope[s] += psi[j] * slopes.instance[i] * a[s];
  }
  const double psi_u = psi[terms.num_templates()], psi_w = psi[terms.num_templates() + 1];
  for (size_t s = 0; s < slopes.unigram.size(); ++s) count_slope[s] += psi_u * slopes.unigram[s];
  for (int64_t v = first; v < end; ++v)
    for (int32_t s = 0; s < K; ++s) out[data.state_offset[v] + s] += count_slope[s];
  for (size_t k = 0; k < slopes.position.size(); ++k)
    out[data.state_offset[first] + static_cast<int64_t>(k)] += psi_w * slopes.position[k];
}

void add_slope_products(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                        const TermSlopes& slopes, std::span<const double> x,
                        std::span<double> per_weight) {
  if (!has_terms(terms, n)) return;
  const int32_t K = terms.num_states;
  const int64_t first = data.var_offset[n], end = data.var_offset[n + 1];
  std::vector<double> sums(static_cast<size_t>(K), 0.0);  // U(x)
  for (int64_t v = first; v < end; ++v)
    for (int32_t s = 0; s < K; ++s) sums[s] += x[data.state_offset[v] + s];
  for (size_t i = 0; i < slopes.instance.size(); ++i) {
    const int32_t j = terms.count_template[terms.count_offset[n] + static_cast<int64_t>(i)];
    const double* a = terms.count_a.data() + int64_t{j} * K;
    double product = 0.0;
    for (int32_t s = 0; s < K; ++s) product += a[s] * sums[s];
    per_weight[j] += slopes.instance[i] * product;
  }
  const int64_t templates = terms.num_templates();
  for (size_t s = 0; s < slopes.unigram.size(); ++s)
    per_weight[templates] += slopes.unigram[s] * sums[s];
  for (size_t k = 0; k < slopes.position.size(); ++k)
    per_weight[templates + 1] +=
        slopes.position[k] * x[data.state_offset[first] + static_cast<int64_t>(k)];
}

double nonlocal_energy(const Dataset& data, const NonlocalTerms& terms, std::span<const double> psi,
                       int64_t n, std::span<const double> belief, std::span<double> subgradient) {
  std::vector<double> unit_values(psi.size(), 0.0);
  const TermSlopes slopes = term_slopes(data, terms, n, belief, unit_values);
  if (!subgradient.empty()) add_weighted_slopes(data, terms, n, psi, slopes, subgradient);
  double value = 0.0;
  for (size_t w = 0; w < psi.size(); ++w) value += psi[w] * unit_values[w];
  return value;
}

}  // namespace pdsp
