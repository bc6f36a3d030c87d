// Large sparse linear chains (gen/chain.hpp): a seed fixes the data and another changes it; the
// shapes, the parameter layout and the rows (exactly `active` distinct attributes per token) are
// CRFsuite's model; attribute frequencies follow the Zipf law; sentence lengths are plausible;
// the file round-trips through the format-2 reader; a short training run lowers F and predicts
// held-out sentences of the same hidden model well above chance; bad options are one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/gen/chain.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "support/dataset_files.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

ChainOptions small_chain(int sentences, int attributes, int labels, int active) {
  ChainOptions options;
  options.sentences = sentences;
  options.attributes = attributes;
  options.labels = labels;
  options.active = active;
  return options;
}

TEST(ChainData, TheSeedFixesTheData) {
  ChainOptions options = small_chain(100, 2000, 5, 6);
  const Dataset a = generate_chain(options), b = generate_chain(options);
  EXPECT_EQ(a.var_offset, b.var_offset);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.observations.index, b.observations.index);
  options.seed = 2;
  const Dataset c = generate_chain(options);
  EXPECT_NE(a.label, c.label);
  EXPECT_NE(a.observations.index, c.observations.index);
}

TEST(ChainData, ShapesParametersAndRowsAreCrfsuitesModel) {
  const int A = 3000, L = 7, K = 20;
  const Dataset data = generate_chain(small_chain(150, A, L, K));
  const int64_t tokens = data.num_vars();
  ASSERT_EQ(data.num_examples(), 150);
  EXPECT_EQ(data.num_params, int64_t{A} * L + L * L);
  EXPECT_EQ(chain_num_params(small_chain(1, A, L, K)), int64_t{A} * L + L * L);
  EXPECT_EQ(data.num_factors(), tokens - 150);  // a sentence of n tokens has n - 1 edges
  for (int64_t n = 0; n < data.num_examples(); ++n)
    for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a) {
      const int64_t first = data.var_offset[n] + (a - data.factor_offset[n]);
      EXPECT_EQ(data.factor_vars[2 * a], first);
      EXPECT_EQ(data.factor_vars[2 * a + 1], first + 1);
    }
  for (int64_t v = 0; v < tokens; ++v) {
    ASSERT_EQ(data.card[v], L);
    ASSERT_GE(data.label[v], 0);
    ASSERT_LT(data.label[v], L);
  }
  // Attributes: one row per token, K distinct positions in [0, A), increasing, every value 1.
  const ObservationRows& obs = data.observations;
  EXPECT_EQ(data.obs_offset, data.var_offset);
  EXPECT_TRUE(obs.value.empty());
  ASSERT_EQ(obs.num_rows(), tokens);
  for (int64_t v = 0; v < tokens; ++v) {
    ASSERT_EQ(data.var_types.obs_row[v], v);
    ASSERT_EQ(obs.ptr[v + 1] - obs.ptr[v], K);
    for (int64_t k = obs.ptr[v]; k < obs.ptr[v + 1]; ++k) {
      ASSERT_GE(obs.index[k], k == obs.ptr[v] ? 0 : obs.index[k - 1] + 1) << "token " << v;
      ASSERT_LT(obs.index[k], A);
    }
  }
  // theta[y * A + j] for the attributes, then the one L x L table every edge reads.
  EXPECT_EQ(data.var_types.param_offset, std::vector<int64_t>{0});
  EXPECT_EQ(data.var_types.dim, std::vector<int32_t>{A});
  EXPECT_EQ(data.factor_types.param_offset, std::vector<int64_t>{int64_t{A} * L});
  EXPECT_EQ(data.factor_types.dim, std::vector<int32_t>{0});
  EXPECT_EQ(data.factor_types.type, std::vector<int32_t>(data.num_factors(), 0));
}

// With one attribute per token, attribute 0 (rank 1) against attribute 9 (rank 10): 10^s. At 22
// labels the bands smaller than L, ranks 0 to 30, keep the Zipf law exactly.
TEST(ChainData, AttributeFrequenciesFollowTheZipfLaw) {
  for (const double s : {1.0, 0.5}) {
    ChainOptions options = small_chain(5000, 1000, 22, 1);
    options.zipf = s;
    const Dataset data = generate_chain(options);
    const auto count = [&](int32_t j) {
      return std::count(data.observations.index.begin(), data.observations.index.end(), j);
    };
    const double ratio = static_cast<double>(count(0)) / static_cast<double>(count(9));
    EXPECT_GT(ratio, 0.85 * std::pow(10.0, s)) << "s = " << s;
    EXPECT_LT(ratio, 1.15 * std::pow(10.0, s)) << "s = " << s;
  }
}

TEST(ChainData, SentenceLengthsLookLikeNewswire) {
  const std::vector<int32_t> lengths = chain_sentence_lengths(small_chain(5000, 10, 2, 1));
  ASSERT_EQ(lengths.size(), 5000u);
  EXPECT_GE(*std::min_element(lengths.begin(), lengths.end()), 1);
  EXPECT_LE(*std::max_element(lengths.begin(), lengths.end()), kMaxSentenceLength);
  const double mean = std::accumulate(lengths.begin(), lengths.end(), 0.0) / 5000.0;
  EXPECT_GT(mean, 22.0);
  EXPECT_LT(mean, 26.0);
  std::vector<int32_t> sorted = lengths;
  std::nth_element(sorted.begin(), sorted.begin() + 2500, sorted.end());
  EXPECT_LT(sorted[2500], mean);  // skewed to the right: the median below the mean
  const Dataset data = generate_chain(small_chain(40, 50, 3, 2));
  for (int64_t n = 0; n < 40; ++n)
    EXPECT_EQ(data.var_offset[n + 1] - data.var_offset[n],
              chain_sentence_lengths(small_chain(40, 50, 3, 2))[n]);
}

TEST(ChainData, TheFileRoundTripsThroughTheFormatTwoReader) {
  testing::files::TempDir dir;
  const Dataset data = generate_chain(small_chain(30, 500, 4, 5));
  write_dataset(dir.file("chain.h5"), data);
  const Dataset back = read_dataset(dir.file("chain.h5"));
  EXPECT_EQ(back.num_params, data.num_params);
  EXPECT_EQ(back.label, data.label);
  EXPECT_EQ(back.factor_vars, data.factor_vars);
  EXPECT_EQ(back.observations.ptr, data.observations.ptr);
  EXPECT_EQ(back.observations.index, data.observations.index);
  EXPECT_EQ(back.var_types.obs_row, data.var_types.obs_row);
  EXPECT_EQ(back.factor_types.param_offset, data.factor_types.param_offset);
  EXPECT_EQ(back.obs_offset, data.obs_offset);
}

// The share of `data`'s tokens whose largest belief at `theta` is their label, and the share
// of the most frequent label (what a constant guess gets).
std::pair<double, double> accuracy_and_chance(const Dataset& data,
                                              const std::vector<double>& theta) {
  LocalProblem predictor(data, {1.0, CountingMode::Bethe, 0.0, false, "chain"});
  predictor.set_theta(theta);
  for (int sweep = 0; sweep < 50 && predictor.sweep(1) > 1e-9; ++sweep) {
  }
  predictor.evaluate();
  const std::span<const double> belief = predictor.beliefs();
  int64_t right = 0;
  std::vector<int64_t> per_label(static_cast<size_t>(data.card[0]), 0);
  for (int64_t v = 0; v < data.num_vars(); ++v) {
    const auto first = belief.begin() + data.state_offset[v];
    right += std::max_element(first, first + data.card[v]) - first == data.label[v];
    ++per_label[data.label[v]];
  }
  const auto tokens = static_cast<double>(data.num_vars());
  return {static_cast<double>(right) / tokens,
          static_cast<double>(*std::max_element(per_label.begin(), per_label.end())) / tokens};
}

// Through a file, as `pdsp gen chain` and `pdsp train` go: the reader fills in the empty feature
// rows that training in memory reads.
TEST(ChainData, AShortTrainingRunLearnsTheHiddenModelWellAboveChance) {
  testing::files::TempDir dir;
  ChainOptions options = small_chain(60, 300, 4, 8);
  write_dataset(dir.file("train.h5"), generate_chain(options));
  options.seed = 2;  // fresh sentences of the same hidden model
  options.sentences = 100;
  write_dataset(dir.file("test.h5"), generate_chain(options));
  const Dataset train_data = read_dataset(dir.file("train.h5"));
  const Dataset test_data = read_dataset(dir.file("test.h5"));
  TrainConfig config;
  config.counting = CountingMode::Bethe;
  config.max_iters = 25;
  config.tol = 0;
  LocalProblem problem(train_data, {1.0, CountingMode::Bethe, 1.0, true, "chain"});
  SerialCommunicator serial;
  testing::Recorder recorder;
  const TrainResult result = train(problem, config, serial, recorder);
  ASSERT_GE(recorder.records.size(), 10u);
  EXPECT_LT(recorder.records.back().objective_after_step, 0.5 * recorder.records[0].objective);
  const auto [accuracy, chance] = accuracy_and_chance(test_data, result.state.theta);
  EXPECT_GT(accuracy, chance + 0.2) << "accuracy " << accuracy << ", chance " << chance;
  EXPECT_LT(accuracy, 1.0);
}

TEST(ChainData, BadOptionsAreOneLineErrors) {
  const auto refused = [](ChainOptions options, const char* flag) {
    const std::string error = testing::error_of([&] { generate_chain(options); });
    EXPECT_EQ(error.rfind(flag, 0), 0u) << error;
  };
  ChainOptions options;
  options.labels = 1;
  refused(options, "--labels");
  options = {};
  options.active = options.attributes + 1;
  refused(options, "--active");
  options = {};
  options.zipf = NAN;
  refused(options, "--zipf");
  options.zipf = -1;
  refused(options, "--zipf");
  options = {};
  options.sentences = 0;
  refused(options, "--sentences");
  options = {};
  options.attributes = 1 << 30;  // 2^31 + 4 parameters at 2 labels
  options.labels = 2;
  refused(options, "--attributes/--labels");
  options = small_chain(1000000, 20000, 2, 10000);  // 2^31 observation entries, refused at once
  refused(options, "--sentences/--test-sentences");
}

}  // namespace
}  // namespace pdsp
