// The non-local energies (nonlocal_energy.hpp) on a three-word dictionary, two words of length 3
// and one of length 2: values at labellings worked out by hand, and subgradients against central
// finite differences at interior marginals, where every term is differentiable.
#include "pdsp/learning/nonlocal_energy.hpp"

#include <gtest/gtest.h>

#include <random>

#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

constexpr int32_t kStates = 3;

Dataset three_and_two() {  // example 0: 3 variables, example 1: 2
  return testing::random_dataset(
      {testing::chain_shape(3, kStates), testing::chain_shape(2, kStates)}, 4, 2);
}

// One template per shape, on example 0 only; the words 0 1 2, 2 2 1 and 1 0.
NonlocalTerms dictionary_terms() {
  NonlocalTerms terms;
  terms.num_states = kStates;
  terms.count_a = {1.0, 0.0, -1.0, 0.0, 1.0, 0.0, 0.5, 0.5, 0.5};
  terms.count_b = {-0.5, -1.2, -1.0};
  terms.count_shape = {CountShape::SmoothedHinge, CountShape::Squared, CountShape::Linear};
  terms.count_offset = {0, 3, 3};
  terms.count_template = {0, 1, 2};
  terms.word_ptr = {0, 3, 6, 8};
  terms.word_state = {0, 1, 2, 2, 2, 1, 1, 0};
  terms.unigram = terms.position = true;
  return terms;
}

std::vector<double> one_hot(const Dataset& data, const std::vector<int32_t>& labels) {
  std::vector<double> mu(static_cast<size_t>(data.num_states()), 0.0);
  for (int64_t v = 0; v < data.num_vars(); ++v) mu[data.state_offset[v] + labels[v]] = 1.0;
  return mu;
}

TEST(NonlocalEnergy, ValuesAtLabellingsAsWorkedOutByHand) {
  const Dataset data = three_and_two();
  const NonlocalTerms terms = dictionary_terms();
  // Only one term at a time: psi picks it.
  const auto value = [&](const std::vector<int32_t>& labels, int term, int64_t n) {
    std::vector<double> psi(5, 0.0);
    psi[term] = 1.0;
    return nonlocal_energy(data, terms, psi, n, one_hot(data, labels));
  };
  // Example 0 labelled 0 0 0, counts (3, 0, 0):
  // - template 0, z = 3 - 0 - 0.5 = 2.5: the hinge's linear part, 2.0;
  // - template 1, z = 0 - 1.2: (-1.2)^2 / 2 = 0.72;
  // - template 2, z = 1.5 - 1 = 0.5;
  // - L^u: distances 4 (0 1 2), 6 (2 2 1), 3 (1 0): 3, from the shorter word;
  // - L^w: 4 mismatched entries for 0 1 2 (two positions), 6 for 2 2 1: 4.
  const std::vector<int32_t> zeros = {0, 0, 0, 1, 0};
  EXPECT_DOUBLE_EQ(value(zeros, 0, 0), 2.0);
  EXPECT_DOUBLE_EQ(value(zeros, 1, 0), 0.72);
  EXPECT_DOUBLE_EQ(value(zeros, 2, 0), 0.5);
  EXPECT_DOUBLE_EQ(value(zeros, 3, 0), 3.0);
  EXPECT_DOUBLE_EQ(value(zeros, 4, 0), 4.0);
  // Example 0 labelled 2 2 1 is a word: no distance; template 0, z = 0 - 2 - 0.5 < 0: 0.
  const std::vector<int32_t> word = {2, 2, 1, 1, 0};
  for (int term : {0, 3, 4}) EXPECT_EQ(value(word, term, 0), 0.0) << "term " << term;
  // Example 1 (1 0) has no count terms and is the word 1 0; labelled 0 0 it is 2 from it in
  // either term (counts (2, 0, 0) against (1, 1, 0)).
  for (int term = 0; term < 3; ++term) EXPECT_EQ(value(zeros, term, 1), 0.0);
  EXPECT_EQ(value(word, 3, 1), 0.0);
  EXPECT_EQ(value(word, 4, 1), 0.0);
  const std::vector<int32_t> other = {2, 2, 1, 0, 0};
  EXPECT_DOUBLE_EQ(value(other, 3, 1), 2.0);
  EXPECT_DOUBLE_EQ(value(other, 4, 1), 2.0);
}

TEST(NonlocalEnergy, SubgradientsAreTheDerivativesAtInteriorMarginals) {
  const Dataset data = three_and_two();
  NonlocalTerms terms = dictionary_terms();
  const std::vector<double> psi = {0.8, 0.6, 0.3, 0.7, 0.9};
  std::mt19937_64 random(8);
  std::uniform_real_distribution<double> uniform(0.05, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> mu(static_cast<size_t>(data.num_states()));
    for (int64_t v = 0; v < data.num_vars(); ++v) {
      double total = 0.0;
      for (int32_t s = 0; s < kStates; ++s) total += mu[data.state_offset[v] + s] = uniform(random);
      for (int32_t s = 0; s < kStates; ++s) mu[data.state_offset[v] + s] /= total;
    }
    for (int64_t n = 0; n < data.num_examples(); ++n) {
      std::vector<double> g(mu.size(), 0.0);
      nonlocal_energy(data, terms, psi, n, mu, g);
      for (size_t i = 0; i < mu.size(); ++i) {
        const double h = 1e-6;
        std::vector<double> up = mu, down = mu;
        up[i] += h;
        down[i] -= h;
        const double numeric = (nonlocal_energy(data, terms, psi, n, up) -
                                nonlocal_energy(data, terms, psi, n, down)) /
                               (2 * h);
        EXPECT_NEAR(g[i], numeric, 1e-6)
            << "trial " << trial << ", example " << n << ", state " << i;
      }
    }
  }
}

}  // namespace
}  // namespace pdsp
