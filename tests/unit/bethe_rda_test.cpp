// Bethe-RDA (bethe_rda.hpp) on small chains at eps = 1 with Bethe numbers, where the local
// polytope and the Bethe entropy are exact, against the optimum J* of
//   J(mu) = -<u, mu> - H(mu) + L_psi(mu)
// found independently of RDA: each convex term is a maximum of affine functions of mu (the
// smoothed hinge h(z) = max over y in [0, 1] of y z - y^2 / 2; |x|_1 = max over a box of z . x),
// so J* is the maximum over those multipliers of the concave dual
//   -log Z(u - c) + (the multipliers' own terms), c the node offset they make,
// which projected gradient ascent with log Z and marginals by enumeration solves. J at an RDA
// iterate mu_t (the marginals of u + o_t) is -log Z(u + o_t) + <o_t, mu_t> + L_psi(mu_t).
// The labels' loss and its psi gradient at frozen slopes (what learning psi descends) against
// enumeration and finite differences. Also: psi = 0 leaves plain inference, and L_psi's values and
// subgradients on a three-word dictionary against enumeration of its definition and finite
// differences.
#include "pdsp/learning/bethe_rda.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "pdsp/learning/nonlocal_energy.hpp"
#include "support/brute_force.hpp"
#include "support/test_helpers.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

constexpr int32_t kStates = 3;

Dataset chains() {
  return testing::random_dataset(
      {testing::chain_shape(3, kStates), testing::chain_shape(4, kStates)}, 6, 17);
}

ProblemSettings exact_inference() {
  ProblemSettings settings;
  settings.epsilon = 1.0;
  settings.counting = CountingMode::Bethe;
  settings.loss_weight = 0.0;
  settings.loss_augmented = false;
  return settings;
}

// J* with the word of each example's L^u fixed (unigram_word[n]), by projected gradient ascent
// on the dual (above). L^w's word is the one of the example's length (one per length here).
double dual_optimum(const Dataset& data, std::span<const double> theta, const NonlocalTerms& terms,
                    std::span<const double> psi, const std::vector<int64_t>& unigram_word,
                    int iterations, double step) {
  const int64_t states = data.num_states();
  const int64_t J = terms.num_templates();
  const double psi_u = terms.unigram ? psi[J] : 0.0, psi_w = terms.position ? psi[J + 1] : 0.0;
  std::vector<double> y(static_cast<size_t>(terms.count_template.size()), 0.0);
  std::vector<double> unigram_z(static_cast<size_t>(data.num_examples() * kStates), 0.0);
  std::vector<double> position_z(static_cast<size_t>(states), 0.0);
  const auto word_of = [&](int64_t n) {  // the dictionary word of example n's length
    const int64_t length = data.var_offset[n + 1] - data.var_offset[n];
    for (int64_t i = 0; i < terms.num_words(); ++i)
      if (terms.word_ptr[i + 1] - terms.word_ptr[i] == length) return i;
    return int64_t{-1};
  };
  double value = 0.0;
  for (int it = 0; it <= iterations; ++it) {
    std::vector<double> offset(static_cast<size_t>(states), 0.0);  // -c
    for (int64_t n = 0; n < data.num_examples(); ++n)
      for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
        for (int32_t s = 0; s < kStates; ++s) {
          double c =
              psi_u * unigram_z[n * kStates + s] + psi_w * position_z[data.state_offset[v] + s];
          for (int64_t i = terms.count_offset[n]; i < terms.count_offset[n + 1]; ++i)
            c += psi[terms.count_template[i]] * y[i] *
                 terms.count_a[terms.count_template[i] * kStates + s];
          offset[data.state_offset[v] + s] = -c;
        }
    const testing::ExactSolution exact =
        testing::solve_exactly(data, theta, 1.0, 0.0, 0.0, 2.0, offset);
    value = -exact.smax_sum;
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      std::vector<double> counts(kStates, 0.0);
      for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
        for (int32_t s = 0; s < kStates; ++s)
          counts[s] += exact.marginals[data.state_offset[v] + s];
      const int64_t word = word_of(n);
      std::vector<double> word_counts(kStates, 0.0);
      for (int64_t k = terms.word_ptr[unigram_word[n]]; k < terms.word_ptr[unigram_word[n] + 1];
           ++k)
        word_counts[terms.word_state[k]] += 1.0;
      for (int64_t i = terms.count_offset[n]; i < terms.count_offset[n + 1]; ++i) {
        const int32_t j = terms.count_template[i];
        double z = terms.count_b[j];
        for (int32_t s = 0; s < kStates; ++s) z += terms.count_a[j * kStates + s] * counts[s];
        value += psi[j] * (y[i] * terms.count_b[j] - 0.5 * y[i] * y[i]);
        const double grad = psi[j] * (z - y[i]);
        y[i] += step * grad;
        if (terms.count_shape[j] == CountShape::SmoothedHinge) y[i] = std::clamp(y[i], 0.0, 1.0);
      }
      for (int32_t s = 0; s < kStates; ++s) {
        double& z = unigram_z[n * kStates + s];
        value -= psi_u * z * word_counts[s];
        z = std::clamp(z + step * psi_u * (counts[s] - word_counts[s]), -1.0, 1.0);
      }
      for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v) {
        const int32_t letter = terms.word_state[terms.word_ptr[word] + (v - data.var_offset[n])];
        for (int32_t s = 0; s < kStates; ++s) {
          double& z = position_z[data.state_offset[v] + s];
          const double w = s == letter ? 1.0 : 0.0;
          value -= psi_w * z * w;
          z = std::clamp(z + step * psi_w * (exact.marginals[data.state_offset[v] + s] - w), -1.0,
                         1.0);
        }
      }
    }
  }
  return value;  // at the last multipliers, before their last step
}

// J at RDA's current iterate, by enumeration: -log Z(u + o_t) + <o_t, mu_t> + L_psi(mu_t).
double primal_value(const Dataset& data, std::span<const double> theta, const NonlocalTerms& terms,
                    std::span<const double> psi, const BetheRda& rda) {
  const testing::ExactSolution exact =
      testing::solve_exactly(data, theta, 1.0, 0.0, 0.0, 2.0, rda.offset());
  double value = -exact.smax_sum;
  for (int64_t i = 0; i < data.num_states(); ++i) value += rda.offset()[i] * exact.marginals[i];
  for (int64_t n = 0; n < data.num_examples(); ++n)
    value += nonlocal_energy(data, terms, psi, n, exact.marginals);
  return value;
}

void expect_convergence_to_the_dual_optimum(bool smooth_only, double final_tolerance) {
  const Dataset data = chains();
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 5);
  const NonlocalTerms terms = testing::three_state_terms(data, smooth_only);
  const std::vector<double> psi = {0.7, 1.3, 0.4, 0.6, 0.5};
  // L^u's minimum over words commutes with the one over mu: J* is the least optimum over the
  // choices of each example's word (two examples, two words).
  double optimum = INFINITY;
  for (int64_t first = 0; first < 2; ++first)
    for (int64_t second = 0; second < 2; ++second) {
      optimum =
          std::min(optimum, dual_optimum(data, theta, terms, psi, {first, second}, 4000, 0.1));
      if (smooth_only) break;
    }
  LocalProblem problem(data, exact_inference());
  RdaSettings settings;
  settings.tolerance = 0.0;
  BetheRda rda(problem, terms, psi, settings);
  rda.start(theta);
  std::vector<std::pair<int, double>> gaps;
  for (int t = 1; t <= 1024; ++t) {
    rda.step();
    if ((t & (t - 1)) == 0) {
      // RDA's marginals are exact inference's at its offset.
      const testing::ExactSolution exact =
          testing::solve_exactly(data, theta, 1.0, 0.0, 0.0, 2.0, rda.offset());
      EXPECT_LT(testing::max_abs_difference(rda.marginals(),
                                            std::span<const double>(exact.marginals)
                                                .first(static_cast<size_t>(data.num_states()))),
                1e-8)
          << "t = " << t;
      const double gap = primal_value(data, theta, terms, psi, rda) - optimum;
      EXPECT_GT(gap, -1e-7) << "t = " << t << ": below the optimum";
      gaps.emplace_back(t, gap);
    }
  }
  EXPECT_EQ(rda.oracle_calls(), 1025);
  const double slope = std::log(std::max(gaps.back().second, 1e-16) / gaps[4].second) /
                       std::log(double(gaps.back().first) / gaps[4].first);
  std::string rates;
  for (const auto& [t, gap] : gaps) {
    char text[48];
    std::snprintf(text, sizeof text, " t=%d: %.3g", t, gap);
    rates += text;
  }
  ::testing::Test::RecordProperty("gaps", rates);
  ::testing::Test::RecordProperty("log_log_slope", std::to_string(slope));
  std::printf("J(mu_t) - J*:%s; log-log slope from t = 16: %.2f\n", rates.c_str(), slope);
  EXPECT_LT(gaps.back().second, final_tolerance);
  EXPECT_LT(gaps.back().second, 0.1 * gaps[2].second) << "no decrease from t = 4 to 1024";
}

TEST(BetheRda, ReachesTheOptimumOfSmoothCountTermsOnChains) {
  expect_convergence_to_the_dual_optimum(true, 1e-4);
}

TEST(BetheRda, ReachesTheOptimumWithTheDictionaryTermsOnChains) {
  expect_convergence_to_the_dual_optimum(false, 1e-2);
}

// Learning psi differentiates the labels' negative log-likelihood under the last oracle call's
// potentials, u + offset, with the averaged slopes held fixed: the offset is then linear in psi
// (offset_for), and log Z and the labels' score come from enumeration.
TEST(BetheRda, TheLabelLossAndItsPsiGradientMatchEnumerationAndFiniteDifferences) {
  const Dataset data = chains();
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 7);
  const NonlocalTerms terms = testing::three_state_terms(data, false);
  const std::vector<double> psi = {0.7, 1.3, 0.4, 0.6, 0.5};
  LocalProblem problem(data, exact_inference());
  RdaSettings settings;
  settings.iterations = 20;
  settings.tolerance = 0.0;
  BetheRda rda(problem, terms, psi, settings);
  rda.run(theta);
  EXPECT_LT(testing::max_abs_difference(rda.offset_for(psi), rda.offset()), 1e-12);
  const auto loss_at = [&](std::span<const double> weights) {
    return testing::solve_exactly(data, theta, 1.0, 0.0, 0.0, 2.0, rda.offset_for(weights))
        .objective;
  };
  std::vector<double> gradient(psi.size(), 0.0);
  const double loss = rda.label_loss(gradient);
  EXPECT_NEAR(loss, loss_at(psi), 1e-9 * std::abs(loss));
  double largest = 0.0;
  for (size_t w = 0; w < psi.size(); ++w) {
    const double h = 1e-5;
    std::vector<double> up = psi, down = psi;
    up[w] += h;
    down[w] -= h;
    const double numeric = (loss_at(up) - loss_at(down)) / (2 * h);
    EXPECT_NEAR(gradient[w], numeric, 1e-7 * std::max(1.0, std::abs(numeric))) << "weight " << w;
    largest = std::max(largest, std::abs(gradient[w]));
  }
  EXPECT_GT(largest, 1e-3);
}

TEST(BetheRda, NoWeightIsPlainInference) {
  const Dataset data = chains();
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 6);
  const NonlocalTerms terms = testing::three_state_terms(data, false);
  const std::vector<double> psi(static_cast<size_t>(terms.num_weights()), 0.0);
  LocalProblem problem(data, exact_inference());
  BetheRda rda(problem, terms, psi, RdaSettings{});
  EXPECT_EQ(rda.run(theta), 2);  // mu_1 = mu_0: stops at once
  const testing::ExactSolution exact = testing::solve_exactly(data, theta, 1.0, 0.0, 0.0, 2.0);
  EXPECT_LT(
      testing::max_abs_difference(
          rda.marginals(),
          std::span<const double>(exact.marginals).first(static_cast<size_t>(data.num_states()))),
      1e-10);
  EXPECT_EQ(rda.energy(), 0.0);
}

}  // namespace
}  // namespace pdsp
