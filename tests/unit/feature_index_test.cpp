// Both summation orders of FeatureIndex against a plain row-by-row sum, their independence of
// the thread count, and the automatic choice between them.
#include "pdsp/learning/feature_index.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/gen/denoise.hpp"

namespace pdsp {
namespace {

Dataset denoise(int size, int copies, Parameterization params) {
  DenoiseOptions options;
  options.height = options.width = size;
  options.copies = copies;
  options.params = params;
  return generate_denoise(options);
}

std::vector<double> random_weights(const Dataset& data) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> w(static_cast<size_t>(data.num_states() + data.num_table_entries()));
  for (double& x : w) x = uniform(rng);
  return w;
}

// The reference: every example's rows in order, one running sum per parameter.
std::vector<double> row_by_row(const Dataset& data, const std::vector<double>& w) {
  std::vector<double> z(static_cast<size_t>(data.num_params), 0.0);
  for (int64_t n = 0; n < data.num_examples(); ++n) add_example_moments(data, n, w, z);
  return z;
}

std::vector<double> moments(const FeatureIndex& index, const Dataset& data,
                            const std::vector<double>& w, int threads) {
  omp_set_num_threads(threads);
  std::vector<double> z(static_cast<size_t>(data.num_params), -1.0);
  index.moments(w, z);
  return z;
}

void expect_near_all(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) EXPECT_NEAR(a[r], b[r], 1e-10 * (1 + std::abs(b[r])));
}

TEST(FeatureIndex, BothOrdersMatchTheRowByRowSumAndIgnoreTheThreadCount) {
  for (Parameterization params : {Parameterization::PerSite, Parameterization::Shared}) {
    // 24 copies of 32x32: about 245,000 entries, so the by-rows order uses many blocks.
    const Dataset data = denoise(32, 24, params);
    const std::vector<double> w = random_weights(data);
    const std::vector<double> reference = row_by_row(data, w);
    for (FeatureIndex::Order order : {FeatureIndex::Order::ByRows, FeatureIndex::Order::ByParams}) {
      const FeatureIndex index(data, order);
      const std::vector<double> one = moments(index, data, w, 1);
      expect_near_all(one, reference);
      EXPECT_EQ(one, moments(index, data, w, 2));
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(FeatureIndex, ChoosesRowsForFewParametersAndParametersForMany) {
  // Shared: 3 parameters over every entry.
  EXPECT_EQ(FeatureIndex(denoise(32, 24, Parameterization::Shared)).order(),
            FeatureIndex::Order::ByRows);
  // Per-site over many copies: each parameter has many entries, block sums stay small.
  EXPECT_EQ(FeatureIndex(denoise(32, 24, Parameterization::PerSite)).order(),
            FeatureIndex::Order::ByRows);
  // Per-site on one 128x128 image: 65,280 parameters, 162,816 entries, 2.5 per parameter:
  // fewer than 8, so block sums would cost more than the transposed copy.
  EXPECT_EQ(FeatureIndex(denoise(128, 1, Parameterization::PerSite)).order(),
            FeatureIndex::Order::ByParams);
}

TEST(FeatureIndex, GroundTruthMomentsAreTheMomentsOfTheLabelling) {
  const Dataset data = denoise(16, 3, Parameterization::PerSite);
  const FactorGraph graph(data);
  std::vector<double> direct(static_cast<size_t>(data.num_params), -1.0);
  ground_truth_moments(data, graph, direct);
  expect_near_all(direct, row_by_row(data, ground_truth_weights(data, graph)));
}

}  // namespace
}  // namespace pdsp
