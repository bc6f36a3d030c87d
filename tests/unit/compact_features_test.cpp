// Format 2's compact features against their expansion to format 1 rows (computed independently
// in support/compact_data.cpp): potentials, moments in both orders and for any thread count, the
// ground truth, the per-example forms of the baselines, training to the brute-force optimum, and
// the file round trip.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/inference_engine.hpp"
#include "support/brute_force.hpp"
#include "support/compact_checks.hpp"
#include "support/compact_data.hpp"
#include "support/dataset_files.hpp"
#include "support/objective_probe.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;
using testing::positions;
using testing::random_vector;

// Many copies of the loopy shape: enough typed work for several moment blocks.
Dataset large_compact_dataset() {
  return testing::random_compact_dataset(
      std::vector<testing::GraphShape>(600, testing::loopy_shape()), 5);
}

TEST(CompactFeatures, PotentialsEqualTheExpansionToRows) {
  const Dataset data = testing::random_compact_dataset(
      {testing::tree_shape(), testing::loopy_shape(), testing::chain_shape(4)}, 3);
  const Dataset rows = testing::expand_to_rows(data);
  ASSERT_TRUE(data.is_compact());
  const std::vector<double> theta = random_vector(data.num_params, 1);
  const std::vector<double> loss = random_vector(data.num_states(), 2);
  std::vector<double> expected(static_cast<size_t>(positions(data)));
  compute_potentials(rows, theta, loss, expected);
  std::vector<double> actual(expected.size());
  FeatureIndex(data).potentials(theta, loss, actual);
  EXPECT_LT(max_abs_difference(actual, expected), 1e-12);
  std::vector<double> reference(expected.size());
  compute_potentials(data, theta, loss, reference);
  EXPECT_LT(max_abs_difference(reference, expected), 1e-12);
  // Example by example, as the baselines compute them.
  std::vector<double> by_example(expected.size(), NAN);
  const FeatureIndex index(data);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    index.example_potentials(n, theta, loss, by_example);
  EXPECT_LT(max_abs_difference(by_example, expected), 1e-12);
}

TEST(CompactFeatures, MomentsEqualTheExpansionInBothOrdersAndForAnyThreadCount) {
  const Dataset data = large_compact_dataset();
  const Dataset rows = testing::expand_to_rows(data);
  const std::vector<double> weight = random_vector(positions(data), 4);
  std::vector<double> expected(static_cast<size_t>(data.num_params));
  FeatureIndex(rows, FeatureIndex::Order::ByRows).moments(weight, expected);
  for (FeatureIndex::Order order : {FeatureIndex::Order::ByRows, FeatureIndex::Order::ByParams}) {
    const FeatureIndex index(data, order);
    std::vector<std::vector<double>> z(2, std::vector<double>(expected.size(), -1.0));
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      index.moments(weight, z[threads - 1]);
    }
    EXPECT_LT(max_abs_difference(z[0], expected), 1e-10);
    EXPECT_EQ(z[0], z[1]) << "moments depend on the thread count";
  }
  std::vector<double> by_example(expected.size(), 0.0);
  const FeatureIndex index(data);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    index.add_example_moments(n, weight, by_example);
  EXPECT_LT(max_abs_difference(by_example, expected), 1e-10);
}

// Chains of 9 and 12 states, whose variable type (dim 5, sparse rows) the full passes read in
// the state-minor layout (typed_encoding.hpp) and whose factors share a dim-0 table.
Dataset many_state_chains() {
  constexpr int32_t kDim = 5, kMaxStates = 12;
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  DatasetBuilder builder(kDim * kMaxStates + kMaxStates * kMaxStates);
  ObservationRows obs;
  std::vector<int64_t> obs_offset = {0};
  std::vector<int32_t> var_type, factor_type;
  std::vector<LocalIndex> var_row;
  for (int n = 0; n < 40; ++n) {
    builder.begin_example();
    std::vector<int64_t> ids;
    for (int i = 0; i < 4; ++i) {
      const int32_t card = (n + i) % 2 == 0 ? 9 : kMaxStates;
      ids.push_back(builder.add_variable(card, static_cast<int32_t>(rng() % card)));
      var_type.push_back(i == 3 ? -1 : 0);
      var_row.push_back(static_cast<LocalIndex>(obs.num_rows()));
      for (int32_t j = 0; j < kDim; ++j)
        if (rng() % 3 != 0) {
          obs.index.push_back(j);
          obs.value.push_back(normal(rng));
        }
      obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
      if (i > 0) {
        builder.add_factor({ids[i - 1], ids[i]});
        factor_type.push_back(0);
      }
    }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = obs_offset;
  data.observations = obs;
  data.var_types = {true, {0}, {kDim}, var_type, var_row};
  data.factor_types = {true, {kDim * kMaxStates}, {0}, factor_type, {}};
  return data;
}

TEST(CompactFeatures, RegionsOfManyStatesGiveThePotentialsAndMomentsOfTheExpansion) {
  const Dataset data = many_state_chains();
  const Dataset rows = testing::expand_to_rows(data);
  const std::vector<double> theta = random_vector(data.num_params, 8);
  std::vector<double> expected(static_cast<size_t>(positions(data)));
  compute_potentials(rows, theta, {}, expected);
  std::vector<double> actual(expected.size());
  FeatureIndex(data).potentials(theta, {}, actual);
  EXPECT_LT(max_abs_difference(actual, expected), 1e-12);
  const std::vector<double> weight = random_vector(positions(data), 9);
  testing::expect_moments_of_expansion(data, rows, weight, 1e-10);
}

TEST(CompactFeatures, GroundTruthMomentsAndRowBoundEqualTheExpansion) {
  const Dataset data = large_compact_dataset();
  const Dataset rows = testing::expand_to_rows(data);
  std::vector<double> expected(static_cast<size_t>(data.num_params));
  std::vector<double> actual(expected.size());
  InferenceEngine(rows, EngineSettings{}, nullptr).ground_truth_moments(expected);
  InferenceEngine(data, EngineSettings{}, nullptr).ground_truth_moments(actual);
  EXPECT_LT(max_abs_difference(actual, expected), 1e-10);
  // The bound on |potential| / max |theta| may exceed the expansion's (two parts bounded
  // separately) but never fall below it.
  EXPECT_GE(FeatureIndex(data).largest_row_sum(), FeatureIndex(rows).largest_row_sum() - 1e-12);
}

// The ground truth's moments from its positions alone (no dense indicator) against each
// encoding's dense pass on the indicator: bitwise for the typed regions (both layouts, and row
// groups whose blocks end inside a group), whose truth pass keeps the dense blocks and order;
// the rows' truth pass sums in position order, the dense one by blocks. With unobserved
// variables, for 1 and 2 threads.
TEST(CompactFeatures, TruthMomentsFromThePositionsEqualTheDensePass) {
  Dataset partly_labelled = large_compact_dataset();
  for (size_t v = 0; v < partly_labelled.label.size(); v += 7) partly_labelled.label[v] = -1;
  std::vector<Dataset> sets;
  sets.push_back(large_compact_dataset());
  sets.push_back(testing::expand_to_rows(sets.back()));
  sets.push_back(many_state_chains());
  sets.push_back(testing::multi_label_dataset(3000));
  sets.push_back(std::move(partly_labelled));
  for (const Dataset& data : sets) {
    const GroundTruth truth = ground_truth(data, FactorGraph(data));
    const ZeroedArray<double> indicator = truth.indicator();
    int64_t labelled = 0;
    for (double w : indicator) labelled += w != 0.0;
    EXPECT_GT(labelled, data.num_vars() / 2);
    const FeatureIndex index(data);
    for (const auto& encoding : index.encodings()) {
      std::vector<double> dense(static_cast<size_t>(data.num_params), 0.0);
      encoding->add_moments({indicator.data(), indicator.size()}, dense);
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        std::vector<double> sparse(dense.size(), 0.0);
        encoding->add_truth_moments(truth, sparse);
        if (encoding->name() == "rows")
          EXPECT_LT(max_abs_difference(sparse, dense), 1e-12);
        else
          EXPECT_EQ(sparse, dense) << encoding->name() << ", " << threads << " threads";
      }
      omp_set_num_threads(1);
    }
  }
}

// Types whose parameter blocks overlap: their sections are added to the moments one after the
// other (in rounds that never name a parameter twice), whatever the thread count.
TEST(CompactFeatures, TypesSharingParametersGiveTheMomentsOfTheExpansion) {
  Dataset data = large_compact_dataset();
  data.var_types.param_offset[1] = data.var_types.param_offset[0];
  data.factor_types.param_offset[1] = data.factor_types.param_offset[0];
  const Dataset rows = testing::expand_to_rows(data);
  const std::vector<double> weight = random_vector(positions(data), 12);
  testing::expect_moments_of_expansion(data, rows, weight, 1e-10);
}

TEST(CompactFeatures, BetheTrainingOnATreeReachesTheBruteForceOptimumOfTheExpansion) {
  const Dataset data =
      testing::random_compact_dataset({testing::tree_shape(), testing::chain_shape(5)}, 11);
  TrainConfig config;
  config.counting = CountingMode::Bethe;
  config.sweeps = 10;
  config.max_iters = 3000;
  config.tol = 1e-15;
  LocalProblem problem(data, {1.0, CountingMode::Bethe, 1.0, true, "tiny"});
  SerialCommunicator serial;
  testing::Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);
  const std::vector<double> optimum =
      testing::exact_optimum(testing::expand_to_rows(data), 1.0, 1.0, 1.0, 2.0);
  EXPECT_LT(max_abs_difference(result.state.theta, optimum), 1e-6);
}

TEST(CompactFeatures, TrainsAlongTheTrajectoryOfItsExpansionOnALoopyGraph) {
  const Dataset data = testing::random_compact_dataset(
      {testing::loopy_shape(), testing::grid_shape(3, 4), testing::loopy_shape()}, 21);
  const Dataset rows = testing::expand_to_rows(data);
  TrainConfig config;
  config.counting = CountingMode::Uniform;
  // The same trajectory: stopped before F is flat to round-off, where a step search accepts or
  // rejects a trial by the last bit (the optimum itself is checked against brute force above).
  config.max_iters = 10;
  config.tol = 0;
  // The rows have no typed blocks, so L-BFGS starts from gamma I there: the same on both.
  config.lbfgs_curvature = "identity";
  std::vector<std::vector<double>> theta;
  for (const Dataset* d : {&data, &rows}) {
    LocalProblem problem(*d, {1.0, CountingMode::Uniform, 1.0, true, "tiny"});
    SerialCommunicator serial;
    testing::Recorder recorder;
    theta.push_back(train(problem, config, serial, recorder).state.theta);
  }
  EXPECT_LT(max_abs_difference(theta[0], theta[1]), 1e-9);
}

TEST(CompactFeatures, AFileKeepsEveryArrayAndSaysFormat2WhileRowsStayFormat1) {
  using namespace testing::files;
  const TempDir dir;
  const Dataset data = large_compact_dataset();
  const std::string compact = dir.file("compact.h5");
  const std::string expanded = dir.file("rows.h5");
  write_dataset(compact, data);
  write_dataset(expanded, testing::expand_to_rows(data));
  EXPECT_EQ(h5::File::open_read(compact).read_int_attribute("format_version"), 2);
  EXPECT_EQ(h5::File::open_read(expanded).read_int_attribute("format_version"), 1);
  EXPECT_FALSE(h5::File::open_read(expanded).exists("/obs/ptr"));
  const Dataset back = read_dataset(compact);
  EXPECT_EQ(back.obs_offset, data.obs_offset);
  EXPECT_EQ(back.observations.ptr, data.observations.ptr);
  EXPECT_EQ(back.observations.index, data.observations.index);
  EXPECT_EQ(bits(back.observations.value), bits(data.observations.value));
  for (auto kind : {&Dataset::var_types, &Dataset::factor_types}) {
    EXPECT_EQ((back.*kind).param_offset, (data.*kind).param_offset);
    EXPECT_EQ((back.*kind).dim, (data.*kind).dim);
    EXPECT_EQ((back.*kind).type, (data.*kind).type);
    EXPECT_EQ((back.*kind).obs_row, (data.*kind).obs_row);
  }
  SerialCommunicator serial;
  EXPECT_EQ(dataset_fingerprint(back, serial), dataset_fingerprint(data, serial));
  EXPECT_NE(dataset_fingerprint(back, serial), dataset_fingerprint(read_dataset(expanded), serial));
}

// Checkpoints record the training set's fingerprint and a resume compares it: a format 1 data
// set must keep the fingerprint earlier pdsp builds wrote. The file is `pdsp gen denoise --height
// 6 --width 5 --train-copies 2`, the data the build before format 2 (384cb06) fingerprinted so.
// It is read, not generated again: the generator's last bits depend on whether the build
// contracts multiply-adds (PDSP_NATIVE), and the fingerprint must not.
TEST(CompactFeatures, AFormat1DataSetKeepsTheFingerprintOfEarlierBuilds) {
  SerialCommunicator serial;
  EXPECT_EQ(
      dataset_fingerprint(read_dataset(PDSP_UNIT_TEST_DATA "/denoise_6x5_format1.h5"), serial),
      "examples=2 variables=60 factors=98 states=120 table_entries=392 nnz=512 params=109 "
      "checksum=7877160dc82c073b");
}

}  // namespace
}  // namespace pdsp
