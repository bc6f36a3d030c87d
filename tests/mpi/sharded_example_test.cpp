// One example split across the ranks (issue 15): each rank holds a shard, exchanges halo
// messages after every colour class, and the result is the unsharded one. Every rank also solves
// the whole example alone and compares: the messages of its own variables bitwise, F, D, the
// violation and the moments to round-off, and trained theta within 1e-9. Run under mpirun -np 2
// and, oversubscribed, -np 3 and 4 (the shard count is the rank count).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "mpi/mpi_world.hpp"
#include "mpi/shared_file.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/dataset_io.hpp"
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

// A connected random graph of binary and ternary variables with pairwise and arity-3 factors:
// a chain keeps it connected, the other factors join random variables.
testing::GraphShape irregular_shape(int vars, int extra_factors, uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::GraphShape shape;
  for (int v = 0; v < vars; ++v) shape.cards.push_back(v % 3 == 0 ? 3 : 2);
  for (int v = 0; v + 1 < vars; ++v) shape.factors.push_back({v, v + 1});
  std::uniform_int_distribution<int64_t> pick(0, vars - 1);
  for (int f = 0; f < extra_factors; ++f) {
    std::vector<int64_t> members;
    const size_t arity = f % 3 == 0 ? 3 : 2;
    while (members.size() < arity) {
      const int64_t v = pick(rng);
      if (std::find(members.begin(), members.end(), v) == members.end()) members.push_back(v);
    }
    shape.factors.push_back(members);
  }
  return shape;
}

void remove_shared_file(const std::string& path) {
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

// A one-example data set as every rank reads it whole, and this rank's shard of it: one shard
// per rank, as the loader cuts it.
struct Split {
  Dataset whole, shard;
};
Split split_across_ranks(const Dataset& data) {
  const std::string path = testing::shared_file("pdsp-split", data);
  Split split{read_dataset(path),
              load_rank_slice(path, testing::world(), nullptr, {}, testing::world().size())};
  EXPECT_TRUE(split.shard.shard != nullptr);
  SerialCommunicator serial;
  EXPECT_EQ(dataset_fingerprint(split.shard, testing::world()),
            dataset_fingerprint(split.whole, serial))
      << "the shards hash the example as a whole slice would";
  remove_shared_file(path);
  return split;
}

std::vector<double> random_theta(int64_t params, uint64_t seed) {
  return testing::normal_theta(params, 0.7, seed);
}

void expect_close(double sharded, double whole, const std::string& what) {
  EXPECT_NEAR(sharded, whole, 1e-11 * std::max(1.0, std::abs(whole))) << what;
}

// Sweeps and evaluates the whole example and the shards at the same theta.
void expect_sharded_equals_whole(const Split& split, const ProblemSettings& settings,
                                 const std::string& name) {
  SCOPED_TRACE(name);
  Communicator& comm = testing::world();
  const Dataset& whole = split.whole;
  const Dataset& shard = split.shard;
  LocalProblem reference(whole, settings);
  LocalProblem sharded(shard, settings);
  EXPECT_EQ(reference.kernel_name().substr(0, 7), sharded.kernel_name().substr(0, 7));
  const std::vector<double> theta = random_theta(whole.num_params, 3);
  reference.set_theta(theta);
  sharded.set_theta(theta);
  reference.sweep(3);
  sharded.sweep(3);
  reference.resolve_kinks();  // re-solves the c_v = 0 variables, if any
  sharded.resolve_kinks();

  // Messages of own variables, bitwise: the sweep is the unsharded one.
  const std::vector<double> whole_arena = reference.messages();
  const std::vector<double> shard_arena = sharded.messages();
  const FactorGraph& wg = reference.graph();
  const FactorGraph& sg = sharded.graph();
  int64_t compared = 0, differing = 0;
  for (int64_t la = 0; la < shard.num_factors(); ++la) {
    const int64_t a = shard.shard->global_factor[la] - whole.first_factor;
    for (int64_t k = 0; k < shard.arity(la); ++k) {
      const int64_t se = shard.factor_var_ptr[la] + k, we = whole.factor_var_ptr[a] + k;
      if (shard.factor_vars[se] >= shard.owned_vars()) continue;  // a halo variable's
      for (int64_t i = 0; i < wg.message_offset(we + 1) - wg.message_offset(we); ++i) {
        ++compared;
        if (shard_arena[sg.message_offset(se) + i] != whole_arena[wg.message_offset(we) + i])
          ++differing;
      }
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_EQ(differing, 0) << "of " << compared << " message entries";

  const LocalEvaluation w = reference.evaluate();
  const LocalEvaluation s = sharded.evaluate();
  double sums[4] = {s.objective, s.dual, s.expected_loss, sharded.objective()};
  double maxima[1] = {s.violation};
  comm.allreduce(sums, maxima);
  expect_close(sums[0], w.objective, "F");
  expect_close(sums[1], w.dual, "D");
  expect_close(sums[2], w.expected_loss, "expected loss");
  expect_close(sums[3], reference.objective(), "objective()");
  EXPECT_EQ(maxima[0], w.violation) << "the largest violation, over every (factor, variable)";

  std::vector<double> zw(static_cast<size_t>(whole.num_params)), zs(zw.size());
  reference.model_moments(zw);
  sharded.model_moments(zs);
  comm.allreduce_sum(std::span<double>(zs));
  for (size_t j = 0; j < zw.size(); ++j) expect_close(zs[j], zw[j], "moment " + std::to_string(j));
  std::vector<double> dw(zw.size()), ds(zw.size());
  reference.ground_truth_moments(dw);
  sharded.ground_truth_moments(ds);
  comm.allreduce_sum(std::span<double>(ds));
  for (size_t j = 0; j < dw.size(); ++j) expect_close(ds[j], dw[j], "truth " + std::to_string(j));
  const double entropy_whole = reference.consistent_beliefs(zw);
  double entropy_shards[1] = {sharded.consistent_beliefs(zs)};
  comm.allreduce_sum(std::span<double>(zs));
  comm.allreduce_sum(std::span<double>(entropy_shards));
  for (size_t j = 0; j < zw.size(); ++j)
    expect_close(zs[j], zw[j], "consistent moment " + std::to_string(j));
  expect_close(entropy_shards[0], entropy_whole, "entropy terms of the consistent beliefs");
}

ProblemSettings settings_for(double epsilon, CountingMode counting) {
  ProblemSettings settings;
  settings.epsilon = epsilon;
  settings.counting = counting;
  settings.source = "test";
  return settings;
}

TEST(ShardedExample, FourConnectedGridSweepsAsOneExample) {
  const Split whole =
      split_across_ranks(testing::random_dataset({testing::grid_shape(12, 10)}, 5, 11));
  expect_sharded_equals_whole(whole, settings_for(1.0, CountingMode::Uniform), "binary kernels");
  ProblemSettings general = settings_for(0.7, CountingMode::Uniform);
  general.specialised_kernels = false;
  expect_sharded_equals_whole(whole, general, "general kernels");
  ProblemSettings single = settings_for(1.0, CountingMode::Uniform);
  single.message_precision = MessagePrecision::Single;
  expect_sharded_equals_whole(whole, single, "single-precision messages");
  expect_sharded_equals_whole(whole, settings_for(1.0, CountingMode::Bethe),
                              "Bethe numbers (saddle regime)");
  expect_sharded_equals_whole(whole, settings_for(0.0, CountingMode::Uniform), "eps = 0");
}

TEST(ShardedExample, EightConnectedGridSweepsAsOneExample) {
  const Split whole =
      split_across_ranks(testing::random_dataset({testing::grid_shape(9, 11, true)}, 4, 12));
  expect_sharded_equals_whole(whole, settings_for(1.0, CountingMode::Uniform), "binary kernels");
  ProblemSettings general = settings_for(0.5, CountingMode::Uniform);
  general.specialised_kernels = false;
  expect_sharded_equals_whole(whole, general, "general kernels");
}

TEST(ShardedExample, IrregularGraphWithTernaryVariablesAndCutArityThreeFactors) {
  const Split whole =
      split_across_ranks(testing::random_dataset({irregular_shape(90, 70, 5)}, 6, 13));
  const Dataset& shard = whole.shard;
  int64_t cut_arity_three = 0;
  for (int64_t a = 0; a < shard.num_factors(); ++a) {
    bool halo = false;
    for (int64_t k = shard.factor_var_ptr[a]; k < shard.factor_var_ptr[a + 1]; ++k)
      halo |= shard.factor_vars[k] >= shard.owned_vars();
    cut_arity_three += halo && shard.arity(a) == 3 ? 1 : 0;
  }
  EXPECT_GT(cut_arity_three, 0) << "the partition cuts factors of arity 3";
  expect_sharded_equals_whole(whole, settings_for(1.0, CountingMode::Uniform), "uniform");
  expect_sharded_equals_whole(whole, settings_for(0.3, CountingMode::Uniform), "eps 0.3");
  expect_sharded_equals_whole(whole, settings_for(0.0, CountingMode::Uniform), "eps = 0");
  Dataset counted = testing::random_dataset({irregular_shape(60, 40, 7)}, 4, 14);
  testing::set_random_counting(counted, 0.5, 1.5, 15);
  expect_sharded_equals_whole(split_across_ranks(counted), settings_for(0.8, CountingMode::File),
                              "counting numbers from the file");
  // c_v = 0: those variables' blocks are re-solved class by class, across the cut as well.
  for (size_t v = 0; v < counted.var_counting.size(); v += 3) counted.var_counting[v] = 0.0;
  {  // the re-solve changes those variables' messages (so the comparison below can fail)
    LocalProblem alone(counted, settings_for(0.8, CountingMode::File));
    alone.set_theta(random_theta(counted.num_params, 3));
    alone.sweep(3);
    const std::vector<double> swept = alone.messages();
    alone.resolve_kinks();
    EXPECT_NE(alone.messages(), swept);
  }
  expect_sharded_equals_whole(split_across_ranks(counted), settings_for(0.8, CountingMode::File),
                              "c_v = 0 at every third variable");
}

TEST(ShardedExample, CompactFeaturesAndSharedTables) {
  const Split whole =
      split_across_ranks(testing::random_compact_dataset({testing::grid_shape(10, 10)}, 21));
  expect_sharded_equals_whole(whole, settings_for(1.0, CountingMode::Uniform), "specialised");
  ProblemSettings general = settings_for(0.8, CountingMode::Uniform);
  general.specialised_kernels = false;
  expect_sharded_equals_whole(whole, general, "general kernels, shared tables");
}

std::vector<double> trained_theta(const Dataset& data, const TrainConfig& config,
                                  Communicator& comm) {
  LocalProblem problem(data, {config.epsilon, config.counting, config.loss_weight, true, "test"});
  Silent silent;
  return train(problem, config, comm, silent).state.theta;
}

void expect_same_training(const Split& split, const TrainConfig& config, const std::string& name,
                          double tolerance = 1e-9) {
  SCOPED_TRACE(name);
  SerialCommunicator serial;
  const std::vector<double> reference = trained_theta(split.whole, config, serial);
  const std::vector<double> sharded = trained_theta(split.shard, config, testing::world());
  ASSERT_EQ(sharded.size(), reference.size());
  for (size_t j = 0; j < reference.size(); ++j)
    EXPECT_NEAR(sharded[j], reference[j], tolerance * std::max(1.0, std::abs(reference[j])))
        << "param " << j;
}

TEST(ShardedExample, TrainingGivesTheUnshardedTheta) {
  TrainConfig config;
  config.counting = CountingMode::Uniform;
  config.max_iters = 60;
  config.tol = 1e-12;
  config.sweeps = 2;
  const Split grid =
      split_across_ranks(testing::random_dataset({testing::grid_shape(10, 12)}, 5, 17));
  expect_same_training(grid, config, "grid, eps = 1");
  const Split irregular =
      split_across_ranks(testing::random_dataset({irregular_shape(70, 50, 9)}, 5, 19));
  config.epsilon = 0.5;
  expect_same_training(irregular, config, "irregular, eps = 0.5");
  config.epsilon = 0.0;
  config.max_iters = 40;
  expect_same_training(grid, config, "grid, eps = 0 (smoothing)");
  // Unsplit, the chain is swept along its tree (one sweep is exact), split by colour classes:
  // the runs take other paths to the same optimum, where both stop on tol (F decreasing by less
  // than 1e-12, relative) with theta 2e-9 apart.
  config.epsilon = 1.0;
  config.counting = CountingMode::Bethe;
  const Split chain =
      split_across_ranks(testing::random_dataset({testing::chain_shape(40)}, 4, 31));
  expect_same_training(chain, config, "a chain under Bethe numbers: c_v = 0 at its two ends", 1e-8);
}

// The loader's layout (auto): examples split where a rank would idle or exceed its share, others
// whole; training on it gives the serial theta, and the data set keeps its fingerprint.
// Returns the layout in words.
std::string expect_loaded_layout_trains_like_one_rank(const Dataset& data,
                                                      const TrainConfig& config,
                                                      const std::string& name) {
  SCOPED_TRACE(name);
  Communicator& comm = testing::world();
  const std::string path = testing::shared_file("pdsp-shards", data);
  std::vector<RankSlice> plan;
  const Dataset slice = load_rank_slice(path, comm, nullptr, {}, 0, &plan);
  const Dataset whole = read_dataset(path);
  SerialCommunicator serial;
  EXPECT_EQ(dataset_fingerprint(slice, comm), dataset_fingerprint(whole, serial));
  const std::vector<double> sharded = trained_theta(slice, config, comm);
  const std::vector<double> reference = trained_theta(whole, config, serial);
  for (size_t j = 0; j < reference.size(); ++j)
    EXPECT_NEAR(sharded[j], reference[j], 1e-9 * std::max(1.0, std::abs(reference[j])))
        << "param " << j << ", layout " << describe_rank_slices(plan);
  remove_shared_file(path);
  return describe_rank_slices(plan);
}

TEST(ShardedExample, UnevenExamplesSplitOnlyTheLargeOne) {
  TrainConfig config;
  config.counting = CountingMode::Uniform;
  config.max_iters = 60;
  config.tol = 1e-12;
  // On 2 ranks the large one and the run of small ones would need a rank each, leaving the large
  // one alone on a rank: the three are split as one (a rank holds part of the large one and the
  // small ones beside it); on 3 ranks the large one is split in two, on 4 in three.
  const Dataset data = testing::random_dataset(
      {testing::grid_shape(4, 4), testing::grid_shape(3, 5), testing::grid_shape(14, 14)}, 5, 23);
  const std::string layout =
      expect_loaded_layout_trains_like_one_rank(data, config, "grids of 16, 15 and 196 variables");
  if (testing::world().size() == 2) {
    EXPECT_EQ(layout, "examples 0-2 as one in 2 shards on ranks 0-1");
  }
  // Auto counting decides per example: Bethe numbers on the chains, uniform on the grid, also
  // when they are split as one.
  TrainConfig automatic = config;
  automatic.counting = CountingMode::Auto;
  const Dataset mixed = testing::random_dataset(
      {testing::chain_shape(12), testing::grid_shape(12, 12), testing::chain_shape(9)}, 4, 41);
  expect_loaded_layout_trains_like_one_rank(mixed, automatic, "chains around a grid, auto");
  const Dataset compact = testing::random_compact_dataset(
      {testing::grid_shape(3, 4), testing::grid_shape(11, 12), testing::grid_shape(2, 5)}, 43);
  expect_loaded_layout_trains_like_one_rank(compact, config, "format 2, grids of 12, 132, 10");
  // One example of 3 variables: at most 3 shards, a rank beyond them holds nothing.
  const Dataset tiny = testing::random_dataset({testing::chain_shape(3)}, 3, 29);
  expect_loaded_layout_trains_like_one_rank(tiny, config, "a chain of 3 variables");
}

TEST(ShardedExample, CompactFileKeepsItsFingerprintWhenSplit) {
  TrainConfig config;
  config.counting = CountingMode::Uniform;
  config.max_iters = 40;
  config.tol = 1e-12;
  const Dataset data = testing::random_compact_dataset({testing::grid_shape(9, 8)}, 37);
  expect_loaded_layout_trains_like_one_rank(data, config, "format 2, one grid");
}

}  // namespace
}  // namespace pdsp
