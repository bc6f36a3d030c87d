// Rank 0's view of the run reaches every rank as one message: a checkpoint directory that
// changes between rank 0's look and the other ranks' turn does not make them disagree, and an
// error rank 0 meets reaches every rank as the same error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "mpi/mpi_world.hpp"
#include "pdsp/app/checkpointing.hpp"
#include "pdsp/parallel/share_from_root.hpp"

namespace pdsp {
namespace {
namespace fs = std::filesystem;

// A directory every rank names alike, made by rank 0.
fs::path shared_directory(const std::string& stem) {
  Communicator& comm = testing::world();
  const std::string path = share_from_root<std::string>(comm, [&](std::string& p) {
    p = (fs::temp_directory_path() / (stem + "-" + std::to_string(::getpid()))).string();
    fs::remove_all(p);
    fs::create_directories(p);
  });
  comm.barrier();
  return path;
}

void touch(const fs::path& path) {
  std::ofstream(path) << "not a checkpoint\n";
}

TEST(RunView, EveryRankActsOnRankZerosListingOfAChangingDirectory) {
  Communicator& comm = testing::world();
  const fs::path directory = shared_directory("pdsp-run-view");
  CheckpointOptions options;
  options.directory = directory.string();
  if (comm.is_root()) touch(directory / "ckpt-000000003.h5");
  comm.barrier();

  // Rank 0 looks first; then another process publishes a newer checkpoint before the other
  // ranks would have looked.
  CheckpointView seen;
  if (comm.is_root()) seen = look_at_checkpoints(options);
  comm.barrier();
  if (comm.rank() == 1) touch(directory / "ckpt-000000009.h5");
  comm.barrier();
  const CheckpointView shared =
      share_from_root<CheckpointView>(comm, [&](CheckpointView& v) { v = seen; });

  EXPECT_EQ(shared.iterations, std::vector<int>{3});
  ASSERT_EQ(shared.candidates.size(), 1u);
  EXPECT_EQ(fs::path(shared.candidates[0]).filename(), "ckpt-000000003.h5");
  // What a rank listing on its own would now see differs: the directory did change.
  EXPECT_EQ(look_at_checkpoints(options).iterations, (std::vector<int>{9, 3}));
  comm.barrier();
  if (comm.is_root()) fs::remove_all(directory);
}

TEST(RunView, AnErrorOnRankZeroIsTheSameErrorOnEveryRank) {
  Communicator& comm = testing::world();
  const fs::path directory = shared_directory("pdsp-run-view-file");
  if (comm.is_root()) touch(directory / "a-file");
  comm.barrier();
  CheckpointOptions options;
  options.directory = (directory / "a-file").string();
  try {
    (void)share_from_root<CheckpointView>(
        comm, [&](CheckpointView& v) { v = look_at_checkpoints(options); });
    ADD_FAILURE() << "a checkpoint directory that is a file was accepted";
  } catch (const CollectiveError& error) {
    EXPECT_NE(std::string(error.what()).find("is a file, not a directory"), std::string::npos)
        << error.what();
    EXPECT_EQ(error.reporter(), comm.is_root());
  }
  comm.barrier();
  if (comm.is_root()) fs::remove_all(directory);
}

// A header crosses with what every rank checks the vectors it reads against (their checksums and
// length); a state's L-BFGS memory, which headers no longer hold, crosses too where one has it.
TEST(RunView, CarriesTheLbfgsMemoryOfACheckpointHeader) {
  Communicator& comm = testing::world();
  const CheckpointView shared = share_from_root<CheckpointView>(comm, [&](CheckpointView& v) {
    v.headers.emplace_back();
    v.headers.back().num_params = 2;
    v.headers.back().theta_checksum = "theta-sum";
    v.headers.back().lbfgs_checksum = "memory-sum";
    LbfgsMemory& memory = v.headers.back().state.lbfgs;
    memory.s = {1.0, -2.0};
    memory.y = {0.5, 3.0};
    memory.step = {1e-300, 7.0};
    memory.gradient = {-0.0, 2.5};
  });
  ASSERT_EQ(shared.headers.size(), 1u);
  EXPECT_EQ(shared.headers[0].num_params, 2);
  EXPECT_EQ(shared.headers[0].theta_checksum, "theta-sum");
  EXPECT_EQ(shared.headers[0].lbfgs_checksum, "memory-sum");
  const LbfgsMemory& memory = shared.headers[0].state.lbfgs;
  EXPECT_EQ(memory.s, (std::vector<double>{1.0, -2.0}));
  EXPECT_EQ(memory.y, (std::vector<double>{0.5, 3.0}));
  EXPECT_EQ(memory.step, (std::vector<double>{1e-300, 7.0}));
  EXPECT_EQ(memory.gradient, (std::vector<double>{-0.0, 2.5}));
}

}  // namespace
}  // namespace pdsp
