// The likelihood baselines' evaluation on two ranks: an example that needs the annealed start
// (its best start leaves a negative NLL) on one rank only must not leave the other rank in a
// different collective, and the objective must equal one rank's.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "mpi/mpi_world.hpp"
#include "mpi/shared_file.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learners/likelihood/likelihood.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

Evaluation evaluate(const Dataset& data, Communicator& comm, std::vector<double>& grad) {
  ApproximateCrf crf(data, ApproximateInference::MeanField, 500, 1e-12);
  Likelihood likelihood(crf, 1.0, comm);
  return likelihood.evaluate(std::vector<double>{3.0, 2.0}, grad);
}

TEST(LikelihoodMpi, AnExampleAnnealedOnOneRankOnlyGivesOneRanksObjective) {
  ASSERT_EQ(testing::world().size(), 2) << "run under mpirun -np 2";
  {  // Only the noisy grid needs the annealed start: the clean one's best start is above its truth.
    const Dataset grid = testing::denoising_grids({false});
    ApproximateCrf clean(grid, ApproximateInference::MeanField, 500, 1e-12);
    clean.set_theta(std::vector<double>{3.0, 2.0});
    std::vector<int> chosen;
    clean.infer_all_best_start(chosen);
    ASSERT_GT(clean.example_log_z()[0], clean.truth_scores()[0]);
  }
  const Dataset data = testing::denoising_grids({true, false});
  const std::string path = testing::shared_file("pdsp-likelihood", data);
  const Dataset slice = load_rank_slice(path, testing::world());
  ASSERT_EQ(slice.num_examples(), 1) << "each rank must hold one grid";
  std::vector<double> two_grad(2), one_grad(2);
  const Evaluation two = evaluate(slice, testing::world(), two_grad);
  SerialCommunicator serial;
  const Evaluation one = evaluate(data, serial, one_grad);
  EXPECT_EQ(two.negative, 0);
  EXPECT_EQ(one.negative, 0);
  EXPECT_TRUE(two.valid);
  EXPECT_NEAR(two.value, one.value, 1e-12 * std::abs(one.value));
  for (size_t r = 0; r < 2; ++r) EXPECT_NEAR(two_grad[r], one_grad[r], 1e-12) << r;
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

}  // namespace
}  // namespace pdsp
