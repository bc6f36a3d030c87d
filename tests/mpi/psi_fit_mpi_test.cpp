// Learning the non-local weights (psi_fit.hpp) on two ranks, each with its slice of the examples
// and of their count instances, agrees with one rank: every measurement is a sum over all
// examples in one allreduce and Bethe-RDA's stopping tests take the largest change over all
// ranks, so only the order of the sums differs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "mpi/mpi_world.hpp"
#include "mpi/shared_file.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learning/psi_fit.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {

std::vector<PsiEpoch> fit_on(const Dataset& data, std::span<const double> theta) {
  ProblemSettings settings;
  settings.counting = CountingMode::Bethe;
  settings.loss_augmented = false;
  LocalProblem problem(data, settings);
  PsiFitSettings fit_settings;
  fit_settings.epochs = 8;
  fit_settings.step = 0.5;
  std::vector<PsiEpoch> epochs;
  fit_psi(problem, data.nonlocal, theta,
          std::vector<double>(static_cast<size_t>(data.nonlocal.num_weights()), 0.0), fit_settings,
          [&](const PsiEpoch& epoch) { epochs.push_back(epoch); });
  return epochs;
}

TEST(PsiFitMpi, TwoRanksAgreeWithOneRank) {
  using testing::chain_shape;
  Dataset data = testing::random_dataset({chain_shape(3, 3), chain_shape(4, 3), chain_shape(2, 3),
                                          chain_shape(5, 3), chain_shape(3, 3)},
                                         6, 29);
  data.nonlocal = testing::three_state_terms(data, false);
  const std::vector<double> theta = testing::normal_theta(data.num_params, 1.0, 8);
  const std::string path = testing::shared_file("pdsp-psi-fit", data);
  const Dataset slice = load_rank_slice(path, testing::world());
  ASSERT_GT(slice.num_examples(), 0) << "each rank holds a part";
  ASSERT_LT(slice.num_examples(), data.num_examples());
  const std::vector<PsiEpoch> two_ranks = fit_on(slice, theta);
  const std::vector<PsiEpoch> one_rank = fit_on(read_dataset(path), theta);
  ASSERT_EQ(two_ranks.size(), one_rank.size());
  for (size_t e = 0; e < one_rank.size(); ++e) {
    EXPECT_EQ(two_ranks[e].oracle_calls, one_rank[e].oracle_calls) << "epoch " << e;
    EXPECT_NEAR(two_ranks[e].loss, one_rank[e].loss, 1e-12 * one_rank[e].loss) << "epoch " << e;
    for (size_t w = 0; w < one_rank[e].psi.size(); ++w)
      EXPECT_NEAR(two_ranks[e].psi[w], one_rank[e].psi[w], 1e-12) << "epoch " << e << ", " << w;
  }
  EXPECT_GT(one_rank.back().psi[0] + one_rank.back().psi[1] + one_rank.back().psi[2], 0.0)
      << "some template is weighed";
  testing::world().barrier();
  if (testing::world().is_root()) std::filesystem::remove(path);
}

}  // namespace
}  // namespace pdsp
