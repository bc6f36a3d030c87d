// The structured SVM learner on two ranks: each runs its pass over its own examples from the
// same theta and the passes are averaged. It reaches the optimum one rank reaches (within the
// two certified gaps), its dual never falls, and the ranks end with the same theta.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "mpi/mpi_world.hpp"
#include "mpi/shared_file.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learners/ssvm_fw/ssvm_frank_wolfe.hpp"
#include "support/compact_data.hpp"

namespace pdsp {
namespace {

class Records final : public TrainingObserver {
 public:
  void on_iteration(const IterationRecord& record) override { all.push_back(record); }
  std::vector<IterationRecord> all;
};

TEST(SsvmFrankWolfeMpi, TwoRanksReachTheOptimumOfOneRank) {
  ASSERT_EQ(testing::world().size(), 2) << "run under mpirun -np 2";
  const Dataset data = testing::multi_label_dataset(9);
  const std::string path = testing::shared_file("pdsp-ssvm", data);
  SsvmConfig config;
  config.C = 0.5;
  config.tol = 1e-8;
  config.max_passes = 20000;

  const Dataset slice = load_rank_slice(path, testing::world());
  ASSERT_LT(slice.num_examples(), data.num_examples()) << "each rank must hold a part";
  Records two;
  const TrainResult distributed = train_ssvm_frank_wolfe(slice, config, testing::world(), two);
  SerialCommunicator serial;
  Records one;
  const TrainResult whole = train_ssvm_frank_wolfe(data, config, serial, one);
  ASSERT_EQ(distributed.stop.kind, StopKind::Converged) << distributed.stop.text;
  ASSERT_EQ(whole.stop.kind, StopKind::Converged) << whole.stop.text;

  const double gaps = two.all.back().gap + one.all.back().gap;
  EXPECT_NEAR(two.all.back().objective, one.all.back().objective, gaps + 1e-12);
  for (size_t r = 0; r < whole.state.theta.size(); ++r)
    EXPECT_NEAR(distributed.state.theta[r], whole.state.theta[r],
                2 * std::sqrt(2 * gaps / config.C) + 1e-9)
        << "param " << r;
  for (size_t k = 1; k < two.all.size(); ++k)
    EXPECT_GE(two.all[k].dual, two.all[k - 1].dual - 1e-12 * std::abs(two.all[k].dual))
        << "pass " << k + 1 << ": combining the ranks' steps never lowers D";
  for (const IterationRecord& record : two.all) {
    EXPECT_GE(record.step, 0.0) << "pass " << record.iteration;  // the exchanges' line search
    EXPECT_LE(record.step, 1.0) << "pass " << record.iteration;
  }
  // Both ranks return the same model: compare rank 0's with every rank's.
  std::vector<double> spread(distributed.state.theta.size());
  for (size_t r = 0; r < spread.size(); ++r) spread[r] = distributed.state.theta[r];
  std::vector<double> negated = spread;
  for (double& x : negated) x = -x;
  testing::world().allreduce({}, spread);
  testing::world().allreduce({}, negated);
  for (size_t r = 0; r < spread.size(); ++r) EXPECT_EQ(spread[r], -negated[r]) << "param " << r;

  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

}  // namespace
}  // namespace pdsp
