#pragma once
// Checks of format 2's encodings against the format 1 expansion (compact_data.hpp), and the
// random vectors they are run on.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <vector>

#include "pdsp/features/feature_index.hpp"
#include "support/test_helpers.hpp"

namespace pdsp::testing {

// `size` values from N(0, 1): theta, losses or belief weights.
// The positions of the potential layout: every state, then every factor table entry.
inline int64_t positions(const Dataset& data) {
  return data.num_states() + data.num_table_entries();
}

inline std::vector<double> random_vector(int64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(static_cast<size_t>(size));
  for (double& v : x) v = normal(rng);
  return x;
}

// The moments of `weight` through the compact encodings of `data` are those through `rows`, its
// format 1 expansion, within `tolerance`, and the same bits on 1 and on 2 threads.
inline void expect_moments_of_expansion(const Dataset& data, const Dataset& rows,
                                        const std::vector<double>& weight, double tolerance) {
  std::vector<double> expected(static_cast<size_t>(data.num_params));
  FeatureIndex(rows, FeatureIndex::Order::ByRows).moments(weight, expected);
  std::vector<std::vector<double>> z(2, std::vector<double>(expected.size()));
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    FeatureIndex(data).moments(weight, z[threads - 1]);
  }
  omp_set_num_threads(1);
  EXPECT_LT(max_abs_difference(z[0], expected), tolerance);
  EXPECT_EQ(z[0], z[1]) << "moments depend on the thread count";
}

}  // namespace pdsp::testing
