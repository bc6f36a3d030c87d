// The curvature model of the quasi-Newton step (KroneckerCurvature): its solve inverts the
// Kronecker product and diagonal written out by hand from the beliefs and observations; the
// automatic kind takes the soft-max curvature where a block has more than two states, and no
// block of too many features for a dense Gram matrix; and
// training with either kind reaches the optimum the identity model reaches, starting with a step
// along -P^{-1} g.
#include "pdsp/learners/primal_dual/kronecker_curvature.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pdsp/learners/primal_dual/trainer.hpp"
#include "support/compact_data.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::max_abs_difference;

// P written out densely: for each typed variable block the Kronecker product of the summed state
// covariances / (N tau) and the summed Gram matrix of the observations, plus C; |m_i| / tau + C
// on the diagonal elsewhere.
std::vector<double> dense_model(const Dataset& data, std::span<const double> belief,
                                std::span<const double> moments, double tau, double C) {
  const auto n = static_cast<size_t>(data.num_params);
  std::vector<double> p(n * n, 0.0);
  std::vector<bool> in_block(n, false);
  const RegionTypes& types = data.var_types;
  for (int64_t k = 0; k < types.num_types(); ++k) {
    const int32_t dim = types.dim[k];
    const int64_t offset = types.param_offset[k];
    std::vector<double> cov(4, 0.0), gram(static_cast<size_t>(dim * dim), 0.0);
    double count = 0;
    for (int64_t v = 0; v < data.num_vars(); ++v) {
      if (types.type[v] != k) continue;
      count += 1;
      const double* b = &belief[data.state_offset[v]];
      for (int s = 0; s < 2; ++s)
        for (int t = 0; t < 2; ++t) cov[s * 2 + t] += (s == t ? b[s] : 0.0) - b[s] * b[t];
      const LocalIndex row = types.obs_row[v];
      std::vector<double> x(static_cast<size_t>(dim), 0.0);
      for (int64_t e = data.observations.ptr[row]; e < data.observations.ptr[row + 1]; ++e)
        x[data.observations.index[e]] = data.observations.value_at(e);
      for (int32_t i = 0; i < dim; ++i)
        for (int32_t j = 0; j < dim; ++j) gram[i * dim + j] += x[i] * x[j];
    }
    for (int s = 0; s < 2; ++s)
      for (int t = 0; t < 2; ++t)
        for (int32_t i = 0; i < dim; ++i)
          for (int32_t j = 0; j < dim; ++j) {
            const size_t row = offset + s * dim + i, col = offset + t * dim + j;
            p[row * n + col] = cov[s * 2 + t] / (count * tau) * gram[i * dim + j];
            in_block[row] = true;
          }
  }
  for (size_t r = 0; r < n; ++r) {
    if (!in_block[r]) p[r * n + r] = std::abs(moments[r]) / tau;
    p[r * n + r] += C;
  }
  return p;
}

TEST(KroneckerCurvature, SolveInvertsTheModelWrittenOutByHand) {
  const Dataset data = testing::multi_label_dataset(12);
  const double tau = 0.7, C = 0.3;
  LocalProblem problem(data, {tau, CountingMode::Uniform, 1.0, true, "tiny"});
  const std::vector<double> theta = testing::evaluate_at_random_theta(problem, 5);
  std::mt19937_64 rng(6);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> moments(theta.size());
  problem.model_moments(moments);

  SerialCommunicator serial;
  KroneckerCurvature curvature(problem, serial, Regularizer{C, 2.0});
  ASSERT_TRUE(curvature.has_blocks());
  curvature.refresh(theta, moments);

  const std::vector<double> p = dense_model(data, problem.beliefs(), moments, tau, C);
  const size_t n = theta.size();
  std::vector<double> x(n), px(n, 0.0), solved(n);
  for (double& v : x) v = normal(rng);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) px[r] += p[r * n + c] * x[c];
  curvature.solve(px, solved);
  EXPECT_LT(max_abs_difference(solved, x), 1e-10);
}

TEST(KroneckerCurvature,
     TheAutomaticKindTakesTheSoftmaxCurvatureBeyondTwoStatesAndOnlyDenseBlocks) {
  using Kind = KroneckerCurvature::Kind;
  SerialCommunicator serial;
  const Dataset ternary = testing::ternary_chains_dataset(23),
                binary = testing::multi_label_dataset(4);
  LocalProblem three(ternary, {1.0, CountingMode::Uniform, 1.0, true, "tiny"});
  LocalProblem two(binary, {1.0, CountingMode::Uniform, 1.0, true, "tiny"});
  EXPECT_TRUE(KroneckerCurvature(three, serial, Regularizer{}, Kind::Automatic).is_softmax());
  EXPECT_FALSE(KroneckerCurvature(three, serial, Regularizer{}, Kind::Kronecker).is_softmax());
  EXPECT_FALSE(KroneckerCurvature(two, serial, Regularizer{}, Kind::Automatic).is_softmax());
  EXPECT_TRUE(KroneckerCurvature(two, serial, Regularizer{}, Kind::Softmax).is_softmax());

  // The same three-state block read as 3,000 features (its rows use the first 3), moved to the
  // end of theta: too many for a dense Gram matrix, so the automatic kind has no block left.
  Dataset sparse = testing::ternary_chains_dataset(23);
  sparse.var_types.param_offset[0] = sparse.num_params;
  sparse.var_types.dim[0] = 3000;
  sparse.num_params += 3 * 3000;
  LocalProblem wide(sparse, {1.0, CountingMode::Uniform, 1.0, true, "tiny"});
  EXPECT_FALSE(KroneckerCurvature(wide, serial, Regularizer{}, Kind::Automatic).has_blocks());
  EXPECT_TRUE(KroneckerCurvature(wide, serial, Regularizer{}, Kind::Kronecker).has_blocks());
}

TEST(KroneckerCurvature, FormatOneDataHasNoBlocks) {
  const Dataset rows = testing::expand_to_rows(testing::multi_label_dataset(4));
  LocalProblem problem(rows, {1.0, CountingMode::Uniform, 1.0, true, "tiny"});
  SerialCommunicator serial;
  EXPECT_FALSE(KroneckerCurvature(problem, serial, Regularizer{}).has_blocks());
}

struct Trained {
  TrainResult result;
  std::vector<IterationRecord> records;
};

Trained train_with(const Dataset& data, const std::string& curvature) {
  TrainConfig config;
  config.epsilon = 1.0;
  config.C = 2.0;
  config.sweeps = 3;
  config.max_iters = 2000;
  config.tol = 1e-14;
  config.lbfgs_curvature = curvature;
  LocalProblem problem(data, {config.epsilon, config.counting, config.loss_weight, true, "tiny"});
  SerialCommunicator serial;
  testing::Recorder recorder;
  Trained run{train(problem, config, serial, recorder), {}};
  run.records = recorder.records;
  return run;
}

// Both stop with a primal-dual gap near 1e-11; F is C-strongly convex, so theta is then within
// sqrt(2 gap / C), about 3e-6, of the optimum (measured: well below 1e-6 apart).
void expect_the_identity_models_optimum(const Dataset& data, const std::string& curvature) {
  const Trained model = train_with(data, curvature);
  const Trained identity = train_with(data, "identity");
  EXPECT_EQ(model.records.front().direction, "curvature") << curvature;
  EXPECT_EQ(identity.records.front().direction, "gradient");
  EXPECT_NEAR(model.result.objective, identity.result.objective,
              1e-10 * std::abs(identity.result.objective))
      << curvature;
  EXPECT_LT(max_abs_difference(model.result.state.theta, identity.result.state.theta), 1e-6)
      << curvature;
  for (const IterationRecord& r : model.records)
    EXPECT_LE(r.objective_after_step, r.objective + 1e-12 * std::abs(r.objective))
        << curvature << ", iteration " << r.iteration;
}

TEST(KroneckerCurvature, TrainingReachesTheOptimumOfTheIdentityModel) {
  expect_the_identity_models_optimum(testing::multi_label_dataset(30), "kronecker");
}

TEST(KroneckerCurvature, TheSoftmaxKindReachesTheOptimumOfTheIdentityModel) {
  expect_the_identity_models_optimum(testing::ternary_chains_dataset(23), "softmax");
  expect_the_identity_models_optimum(testing::multi_label_dataset(30), "softmax");
}

}  // namespace
}  // namespace pdsp
