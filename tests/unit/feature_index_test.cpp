// Both summation orders of FeatureIndex against a plain row-by-row sum, their independence of
// the thread count, and the automatic choice between them; its potentials against the row-by-row
// compute_potentials, with and without the path for rows of exactly one entry.
#include "pdsp/features/feature_index.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/gen/denoise.hpp"
#include "pdsp/learning/inference_engine.hpp"
#include "support/tiny_graphs.hpp"

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

// The reference: every row in layout order, one running sum per parameter.
std::vector<double> row_by_row(const Dataset& data, const std::vector<double>& w) {
  std::vector<double> z(static_cast<size_t>(data.num_params), 0.0);
  const SparseRows* parts[2] = {&data.var_features, &data.factor_features};
  int64_t position = 0;
  for (const SparseRows* rows : parts)
    for (int64_t i = 0; i < rows->num_rows(); ++i, ++position)
      for (int64_t k = rows->ptr[i]; k < rows->ptr[i + 1]; ++k)
        z[rows->param[k]] += w[position] * rows->value[k];
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

// Gives factor row `row` a second entry (parameter 0, value 0.25), so that the factors' part no
// longer has exactly one entry per row.
void add_second_entry(Dataset& data, int64_t row) {
  SparseRows& rows = data.factor_features;
  const auto at = static_cast<size_t>(rows.ptr[row + 1]);
  rows.param.insert(rows.param.begin() + static_cast<std::ptrdiff_t>(at), 0);
  rows.value.insert(rows.value.begin() + static_cast<std::ptrdiff_t>(at), 0.25);
  for (size_t i = static_cast<size_t>(row) + 1; i < rows.ptr.size(); ++i) ++rows.ptr[i];
}

std::vector<double> random_theta(const Dataset& data) {
  return testing::normal_theta(data.num_params, 1.0, 11);
}

TEST(FeatureIndex, FindsThePartsWhoseRowsHoldExactlyOneEntry) {
  Dataset data = denoise(8, 2, Parameterization::PerSite);
  // The generator gives state 0 of a variable no feature and state 1 two (bias and pixel), and
  // each factor table entry one (the pair's parameter, +-1).
  EXPECT_FALSE(FeatureIndex(data).one_entry_per_row(0));
  EXPECT_TRUE(FeatureIndex(data).one_entry_per_row(1));
  add_second_entry(data, 5);
  EXPECT_FALSE(FeatureIndex(data).one_entry_per_row(1));
}

TEST(FeatureIndex, PotentialsEqualTheRowByRowReferenceForAnyThreadCount) {
  for (bool one_entry_per_row : {true, false}) {
    Dataset data = denoise(32, 24, Parameterization::PerSite);
    if (!one_entry_per_row) add_second_entry(data, 1000);
    const std::vector<double> theta = random_theta(data);
    std::vector<double> loss(static_cast<size_t>(data.num_states()));
    for (size_t i = 0; i < loss.size(); ++i) loss[i] = 0.125 * static_cast<double>(i % 3);
    const size_t positions = static_cast<size_t>(data.num_states() + data.num_table_entries());
    std::vector<double> reference(positions, -1.0);
    compute_potentials(data, theta, loss, reference);
    const FeatureIndex index(data);
    ASSERT_EQ(index.one_entry_per_row(1), one_entry_per_row);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      std::vector<double> potential(positions, -1.0);
      index.potentials(theta, loss, potential);
      EXPECT_EQ(potential, reference) << threads << " thread(s)";
      // As an encoding among others, the rows add their part to what is there.
      std::vector<double> added(positions, 0.0);
      std::copy(loss.begin(), loss.end(), added.begin());
      RowEncoding(data, RowEncoding::Order::Auto).add_potentials(theta, added);
      EXPECT_EQ(added, reference) << threads << " thread(s)";
      // The moments of the same layout take the same path.
      const std::vector<double> w = random_weights(data);
      std::vector<double> z(static_cast<size_t>(data.num_params), -1.0);
      index.moments(w, z);
      expect_near_all(z, row_by_row(data, w));
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

// d of design.md §2 as the engine computes it: the model's backward pass on the labelling's
// weights, against the rows of the labelled states and tables summed one by one.
TEST(FeatureIndex, GroundTruthMomentsAreTheFeatureSumsOfTheLabelling) {
  const Dataset data = denoise(16, 3, Parameterization::PerSite);
  const FactorGraph graph(data);
  std::vector<double> expected(static_cast<size_t>(data.num_params), 0.0);
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    const int64_t i = data.state_offset[v] + data.label[v];
    for (int64_t k = data.var_features.ptr[i]; k < data.var_features.ptr[i + 1]; ++k)
      expected[data.var_features.param[k]] += data.var_features.value[k];
  }
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    int64_t t = data.table_offset[a];
    for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
      t += data.label[data.factor_vars[e]] * graph.stride_of(e);
    for (int64_t k = data.factor_features.ptr[t]; k < data.factor_features.ptr[t + 1]; ++k)
      expected[data.factor_features.param[k]] += data.factor_features.value[k];
  }
  const InferenceEngine engine(data, EngineSettings{}, nullptr);
  std::vector<double> d(expected.size(), -1.0);
  engine.ground_truth_moments(d);
  expect_near_all(d, expected);
}

}  // namespace
}  // namespace pdsp
