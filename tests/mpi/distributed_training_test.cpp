// (vii) Distribution does not change the result: 2 ranks agree with 1 rank to 1e-9 relative,
// 1 and 2 threads agree bitwise, a repeated run is bitwise identical, and bad input (or an
// overflowing potential) in one rank's slice stops both ranks with that rank's message.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "mpi/mpi_world.hpp"
#include "mpi/shared_file.hpp"
#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/parameter_compaction.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "support/compact_data.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

class Silent final : public TrainingObserver {
 public:
  void on_iteration(const IterationRecord&) override {}
};

Dataset uneven_examples() {
  using testing::chain_shape;
  using testing::loopy_shape;
  using testing::tree_shape;
  return testing::random_dataset({loopy_shape(), chain_shape(3), tree_shape(), loopy_shape(),
                                  chain_shape(12), tree_shape(), chain_shape(2)},
                                 9, 77);
}

TrainConfig small_config(const std::string& theta_step = "lbfgs") {
  TrainConfig config;
  config.theta_step = theta_step;
  config.epsilon = 0.5;
  config.counting = CountingMode::Uniform;
  config.max_iters = 300;
  config.tol = 1e-10;
  config.sweeps = 2;
  return config;
}

std::vector<double> train_distributed(const std::string& path, Communicator& comm,
                                      const std::string& theta_step) {
  const Dataset slice = load_rank_slice(path, comm);
  const TrainConfig config = small_config(theta_step);
  LocalProblem problem(slice, {config.epsilon, config.counting, config.loss_weight, true, path});
  Silent silent;
  return train(problem, config, comm, silent).state.theta;
}

std::vector<double> train_serially(const Dataset& data, int threads,
                                   const std::string& theta_step = "lbfgs") {
  omp_set_num_threads(threads);
  const TrainConfig config = small_config(theta_step);
  LocalProblem problem(data, {config.epsilon, config.counting, config.loss_weight, true, "data"});
  SerialCommunicator serial;
  Silent silent;
  std::vector<double> theta = train(problem, config, serial, silent).state.theta;
  omp_set_num_threads(2);
  return theta;
}

TEST(Distributed, TwoRanksAgreeWithOneRankAndRunsAreBitwiseReproducible) {
  ASSERT_EQ(testing::world().size(), 2) << "run under mpirun -np 2";
  const Dataset data = uneven_examples();
  const std::string path = testing::shared_file("pdsp-dist", data);
  for (const std::string theta_step : {"lbfgs", "gradient"}) {
    const std::vector<double> two_ranks = train_distributed(path, testing::world(), theta_step);
    const std::vector<double> again = train_distributed(path, testing::world(), theta_step);
    const std::vector<double> one_rank = train_serially(read_dataset(path), 1, theta_step);
    EXPECT_EQ(two_ranks, again) << theta_step
                                << ": same ranks and threads must give a bitwise-identical theta";
    for (size_t r = 0; r < one_rank.size(); ++r)
      EXPECT_NEAR(two_ranks[r], one_rank[r], 1e-9 * std::max(1.0, std::abs(one_rank[r])))
          << theta_step << ", param " << r;
  }
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

TEST(Distributed, CompactFeaturesOnTwoRanksAgreeWithOneRankAndKeepTheFingerprint) {
  // Each rank reads its slice of the observation rows and rebases their ids.
  const Dataset data = testing::random_compact_dataset(
      {testing::loopy_shape(), testing::chain_shape(3), testing::tree_shape(),
       testing::loopy_shape(), testing::chain_shape(9)},
      31);
  const std::string path = testing::shared_file("pdsp-dist-compact", data);
  const std::vector<double> two_ranks = train_distributed(path, testing::world(), "lbfgs");
  const Dataset whole = read_dataset(path);
  const std::vector<double> one_rank = train_serially(whole, 2);
  for (size_t r = 0; r < one_rank.size(); ++r)
    EXPECT_NEAR(two_ranks[r], one_rank[r], 1e-9 * std::max(1.0, std::abs(one_rank[r])))
        << "param " << r;
  const Dataset slice = load_rank_slice(path, testing::world());
  EXPECT_GT(slice.num_examples(), 0) << "each rank holds a part";
  SerialCommunicator serial;
  EXPECT_EQ(dataset_fingerprint(slice, testing::world()), dataset_fingerprint(whole, serial));
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// Each rank's examples read only half of the wide type's positions: the positions trained are
// the union over the ranks, and training on them follows one rank's full layout.
TEST(Distributed, TheParametersTrainedAreThoseAnyRankReads) {
  const Dataset data = testing::wide_sparse_chains(20, 9);
  const std::string path = testing::shared_file("pdsp-dist-compaction", data);
  Dataset slice = load_rank_slice(path, testing::world());
  const ParameterCompaction plan = ParameterCompaction::of_training_set(slice, testing::world());
  SerialCommunicator serial;
  const Dataset whole = read_dataset(path);
  EXPECT_EQ(plan.compact_params(),
            ParameterCompaction::of_training_set(whole, serial).compact_params());
  EXPECT_LT(ParameterCompaction::of_training_set(slice, serial).compact_params(),
            plan.compact_params())
      << "a rank alone reads fewer positions";
  plan.apply(slice);
  const TrainConfig config = small_config();
  LocalProblem problem(slice, {config.epsilon, config.counting, config.loss_weight, true, path});
  Silent silent;
  const std::vector<double> two_ranks =
      plan.expand(train(problem, config, testing::world(), silent).state.theta);
  const std::vector<double> one_rank = train_serially(whole, 2);
  ASSERT_EQ(two_ranks.size(), one_rank.size());
  for (size_t r = 0; r < one_rank.size(); ++r)
    EXPECT_NEAR(two_ranks[r], one_rank[r], 1e-9 * std::max(1.0, std::abs(one_rank[r])))
        << "param " << r;
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// Multi-label examples have typed variable blocks of two states, so L-BFGS uses the Kronecker
// curvature model, whose Gram matrices and state covariances are sums over both ranks; chains of
// three-state variables get the soft-max curvature, whose products reduce over both ranks inside
// every conjugate-gradient step.
TEST(Distributed, TheCurvatureModelOnTwoRanksAgreesWithOneRank) {
  for (const Dataset& data :
       {testing::multi_label_dataset(16), testing::ternary_chains_dataset(29)}) {
    const std::string path = testing::shared_file("pdsp-dist-curvature", data);
    const std::vector<double> two_ranks = train_distributed(path, testing::world(), "lbfgs");
    const std::vector<double> one_rank = train_serially(read_dataset(path), 2);
    for (size_t r = 0; r < one_rank.size(); ++r)
      EXPECT_NEAR(two_ranks[r], one_rank[r], 1e-9 * std::max(1.0, std::abs(one_rank[r])))
          << "param " << r;
    testing::world().barrier();
    if (testing::world().is_root()) std::filesystem::remove(path);
  }
}

TEST(Distributed, ThreadCountDoesNotChangeTheResult) {
  const Dataset data = uneven_examples();
  EXPECT_EQ(train_serially(data, 1), train_serially(data, 2));
}

TEST(Distributed, BothRanksGetTheLoadPartitionedByCost) {
  const Dataset data = uneven_examples();
  const std::string path = testing::shared_file("pdsp-part", data);
  const Dataset slice = load_rank_slice(path, testing::world());
  double examples[1] = {static_cast<double>(slice.num_examples())};
  testing::world().allreduce_sum(std::span<double>(examples));
  EXPECT_GT(slice.num_examples(), 0);
  EXPECT_EQ(examples[0], static_cast<double>(data.num_examples()));
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// Bethe counting numbers are negative only where a variable has two or more factors: here only
// the second example (a 3-chain) has such a variable, and it lands on the second rank. The
// regime (saddle steps, whether the gap may stop training) must still be decided alike on both.
TEST(Distributed, RegimeDecisionsAreTheSameOnEveryRank) {
  const Dataset data = testing::random_dataset(
      {testing::chain_shape(2), testing::chain_shape(2), testing::chain_shape(3)}, 4, 5);
  const std::string path = testing::shared_file("pdsp-regime", data);
  TrainConfig config;
  config.counting = CountingMode::Bethe;
  config.sweeps = 30;
  config.C = 1e6;
  config.tol = 1e-3;
  config.max_iters = 5;
  const Dataset slice = load_rank_slice(path, testing::world());
  LocalProblem problem(slice, {1.0, CountingMode::Bethe, 1.0, true, path});
  Silent silent;
  const TrainResult distributed = train(problem, config, testing::world(), silent);
  const Dataset all = read_dataset(path);
  LocalProblem whole(all, {1.0, CountingMode::Bethe, 1.0, true, path});
  SerialCommunicator serial;
  const TrainResult reference = train(whole, config, serial, silent);
  EXPECT_EQ(distributed.state.iterations_done, reference.state.iterations_done);
  EXPECT_EQ(distributed.stop, reference.stop);
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// Each rank draws the spanning trees of its own examples, seeded by their place in the file:
// the numbers, and so the training, are those of one rank.
TEST(Distributed, TreeReweightedNumbersAreThoseOfOneRank) {
  const Dataset data = testing::random_dataset(
      {testing::grid_shape(3, 3), testing::chain_shape(5), testing::grid_shape(2, 4, true),
       testing::grid_shape(4, 3), testing::chain_shape(2)},
      4, 6);
  const std::string path = testing::shared_file("pdsp-trw", data);
  const Dataset slice = load_rank_slice(path, testing::world());
  const Dataset all = read_dataset(path);
  const CountingNumbers mine =
      make_counting_numbers(slice, FactorGraph(slice), CountingMode::TreeReweighted, path);
  const CountingNumbers whole =
      make_counting_numbers(all, FactorGraph(all), CountingMode::TreeReweighted, path);
  ASSERT_GT(slice.num_examples(), 0);
  for (int64_t a = 0; a < slice.num_factors(); ++a)
    EXPECT_EQ(mine.factor[a], whole.factor[slice.file_factor(a)]) << "factor " << a;
  for (int64_t v = 0; v < slice.num_vars(); ++v)
    EXPECT_EQ(mine.var[v], whole.var[slice.file_var(v)]) << "variable " << v;

  TrainConfig config = small_config();
  config.counting = CountingMode::TreeReweighted;
  LocalProblem problem(slice, {config.epsilon, config.counting, config.loss_weight, true, path});
  LocalProblem alone(all, {config.epsilon, config.counting, config.loss_weight, true, path});
  Silent silent;
  SerialCommunicator serial;
  const std::vector<double> two_ranks =
      train(problem, config, testing::world(), silent).state.theta;
  const std::vector<double> one_rank = train(alone, config, serial, silent).state.theta;
  for (size_t r = 0; r < one_rank.size(); ++r)
    EXPECT_NEAR(two_ranks[r], one_rank[r], 1e-9 * std::max(1.0, std::abs(one_rank[r])))
        << "param " << r;
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

TEST(Distributed, BadLabelInTheLastRanksSliceStopsEveryRankWithThatRanksMessage) {
  Dataset data = uneven_examples();
  data.label.back() = data.card.back();  // out of range, in the last example
  const std::string path = testing::shared_file("pdsp-bad", data);
  bool thrown = false;
  try {
    load_rank_slice(path, testing::world());
  } catch (const CollectiveError& error) {
    thrown = true;
    const bool last_rank = testing::world().rank() == testing::world().size() - 1;
    EXPECT_EQ(error.reporter(), last_rank);
    if (last_rank) {
      EXPECT_NE(std::string(error.what())
                    .find("/vars/label[" + std::to_string(data.num_vars() - 1) + "]"),
                std::string::npos)
          << error.what();
    }
  }
  EXPECT_TRUE(thrown);
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// Two examples of one binary variable each, parameter n on example n: a huge theta[1] overflows
// the potentials of the second rank's slice only, yet both ranks stop, with its message.
TEST(Distributed, APotentialThatOverflowsOnOneRankStopsEveryRankWithThatRanksMessage) {
  DatasetBuilder builder(2);
  for (int32_t n = 0; n < 2; ++n) {
    builder.begin_example();
    builder.add_variable(2, 0, {{}, {{n, 10.0}}});
  }
  const std::string path = testing::shared_file("pdsp-overflow", builder.finish());
  const Dataset slice = load_rank_slice(path, testing::world());
  LocalProblem problem(slice, {1.0, CountingMode::Uniform, 0.0, false, path});
  problem.set_theta(std::vector<double>{1.0, 1e308});
  problem.sweep(1);
  bool thrown = false;
  try {
    problem.evaluate();
  } catch (const CollectiveError& error) {
    thrown = true;
    const bool last_rank = testing::world().rank() == testing::world().size() - 1;
    EXPECT_EQ(error.reporter(), last_rank);
    if (last_rank) {
      EXPECT_EQ(std::string(error.what()),
                path +
                    ": the potential of variable 1 state 1 is inf (its largest term is theta[1] "
                    "= 1e+308 times /vars/feat_value[1] = 10)");
    }
  }
  EXPECT_TRUE(thrown);
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// The maximum is the same on every rank even when one rank's value is NaN (the predict loop
// and the stopping decisions must agree, or the ranks would wait for each other forever).
TEST(Distributed, ANanOnOneRankIsTheMaximumOnEveryRank) {
  double maxima[2] = {testing::world().rank() == 0 ? NAN : 1.0,
                      testing::world().rank() == 0 ? 1.0 : NAN};
  testing::world().allreduce({}, maxima);
  EXPECT_TRUE(std::isnan(maxima[0]));
  EXPECT_TRUE(std::isnan(maxima[1]));
}

}  // namespace
}  // namespace pdsp
