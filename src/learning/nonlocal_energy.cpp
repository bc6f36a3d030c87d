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

}  // namespace

double nonlocal_energy(const Dataset& data, const NonlocalTerms& terms, std::span<const double> psi,
                       int64_t n, std::span<const double> belief, std::span<double> subgradient) {
  const int32_t K = terms.num_states;
  const int64_t first = data.var_offset[n], end = data.var_offset[n + 1];
  const int64_t length = end - first;
  for (int64_t v = first; v < end; ++v)
    if (data.card[v] != K)
      throw std::logic_error("non-local terms of " + std::to_string(K) + " states on variable " +
                             std::to_string(v) + " of " + std::to_string(data.card[v]));
  const auto mu = [&](int64_t v, int32_t s) { return belief[data.state_offset[v] + s]; };
  std::vector<double> counts(static_cast<size_t>(K), 0.0);
  for (int64_t v = first; v < end; ++v)
    for (int32_t s = 0; s < K; ++s) counts[s] += mu(v, s);

  // d/d mu_v(s) of the terms on U(mu), the same for every variable of the example.
  std::vector<double> count_slope(static_cast<size_t>(K), 0.0);
  double value = 0.0;
  for (int64_t i = terms.count_offset[n]; i < terms.count_offset[n + 1]; ++i) {
    const int32_t j = terms.count_template[i];
    const double* a = terms.count_a.data() + int64_t{j} * K;
    double z = terms.count_b[j];
    for (int32_t s = 0; s < K; ++s) z += a[s] * counts[s];
    const CountShape shape = terms.count_shape[j];
    value += psi[j] * shape_value(shape, z);
    const double slope = psi[j] * shape_slope(shape, z);
    for (int32_t s = 0; s < K; ++s) count_slope[s] += slope * a[s];
  }
  const double psi_u = psi[terms.num_templates()], psi_w = psi[terms.num_templates() + 1];
  if (terms.unigram && terms.num_words() > 0) {
    double distance = 0.0;
    const std::vector<double> word_counts = closest_unigram(terms, counts, distance);
    value += psi_u * distance;
    for (int32_t s = 0; s < K; ++s) count_slope[s] += psi_u * sign(counts[s] - word_counts[s]);
  }
  if (!subgradient.empty())
    for (int64_t v = first; v < end; ++v)
      for (int32_t s = 0; s < K; ++s) subgradient[data.state_offset[v] + s] += count_slope[s];

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
      value += psi_w * best_distance;
      if (!subgradient.empty())
        for (int64_t p = 0; p < length; ++p)
          for (int32_t s = 0; s < K; ++s) {
            const double w = terms.word_state[terms.word_ptr[best] + p] == s ? 1.0 : 0.0;
            subgradient[data.state_offset[first + p] + s] += psi_w * sign(mu(first + p, s) - w);
          }
    }
  }
  return value;
}

}  // namespace pdsp
