// Times writing and reading a checkpoint with a given number of message entries, split evenly
// over the MPI ranks (each rank holds and writes only its slice). Run by run/bench_checkpoint.sh.
//   pdsp_bench_checkpoint DIRECTORY GIGABYTES [REPEATS]
#include <cstdio>
#include <filesystem>
#include <string>

#include "pdsp/learning/checkpoint.hpp"
#include "pdsp/parallel/mpi_communicator.hpp"
#include "pdsp/util/clock.hpp"

int main(int argc, char** argv) {
  pdsp::MpiCommunicator comm(&argc, &argv);
  if (argc < 3) {
    if (comm.is_root()) std::fprintf(stderr, "usage: %s DIRECTORY GIGABYTES [REPEATS]\n", argv[0]);
    return 2;
  }
  const std::string path = std::string(argv[1]) + "/bench-checkpoint.h5";
  const double gigabytes = std::stod(argv[2]);
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  const auto total = static_cast<int64_t>(gigabytes * (1 << 30) / sizeof(double));
  const int64_t first = total * comm.rank() / comm.size();
  const int64_t count = total * (comm.rank() + 1) / comm.size() - first;
  std::vector<double> messages(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) messages[i] = 1e-3 * static_cast<double>(first + i);

  pdsp::Checkpoint checkpoint;
  checkpoint.state.theta.assign(16256, 0.5);
  checkpoint.state.step = 1.0;
  checkpoint.data_fingerprint = "benchmark";
  using pdsp::Clock;
  double write_best = 1e300, read_best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    comm.barrier();
    auto start = Clock::now();
    pdsp::write_checkpoint(path, checkpoint, messages, comm);
    comm.barrier();
    write_best = std::min(write_best, pdsp::seconds_since(start));
    std::vector<double> back(messages.size());
    comm.barrier();
    start = Clock::now();
    pdsp::read_checkpoint_header(path, 16256, comm);
    pdsp::read_checkpoint_messages(path, back, comm);
    comm.barrier();
    read_best = std::min(read_best, pdsp::seconds_since(start));
    if (back != messages) {
      std::fprintf(stderr, "rank %d: messages read back differ\n", comm.rank());
      comm.abort(1);
    }
  }
  if (comm.is_root()) {
    const double bytes = static_cast<double>(total) * sizeof(double);
    // One row of run/bench_checkpoint.sh's table: GiB, ranks, write s, write MiB/s, read s,
    // read MiB/s.
    std::printf("%8.2f %6d %8.2f %9.0f %8.2f %9.0f\n", bytes / (1 << 30), comm.size(), write_best,
                bytes / (1 << 20) / write_best, read_best, bytes / (1 << 20) / read_best);
    std::filesystem::remove(path);
  }
  return 0;
}
