// Times the point-to-point exchange a shard makes after each colour class
// (Communicator::start_exchange / finish_exchange, the path HaloExchange takes): ranks in pairs
// (0-1, 2-3, ...) send each other a buffer of doubles and wait for the other's, as two
// neighbouring shards do, for buffer sizes from 1 double to 2^20. Prints per size the median
// seconds of one exchange, and the fit seconds = latency + bytes / bandwidth that
// run/shard_model.py reads (the constants of its cost per sweep). Also times a 3-double
// allreduce, the trainer's scalar reductions. Run by run/shard_model.sh.
//   mpirun -np 2 pdsp_bench_halo [REPEATS]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "pdsp/parallel/mpi_communicator.hpp"
#include "pdsp/util/clock.hpp"

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The median over `repeats` of the slowest rank's time for one exchange of `count` doubles.
double time_exchange(pdsp::Communicator& comm, int64_t count, int repeats) {
  const int peer = comm.rank() ^ 1;
  std::vector<double> send(static_cast<size_t>(count), 1.0), recv(send.size());
  const std::vector<int> peers = peer < comm.size() ? std::vector<int>{peer} : std::vector<int>{};
  const std::vector<std::span<const double>> sends{send};
  const std::vector<std::span<double>> recvs{recv};
  const auto take = peers.empty() ? 0 : 1;
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    comm.barrier();
    const auto start = pdsp::Clock::now();
    comm.start_exchange(peers, std::span(sends).first(take), std::span(recvs).first(take));
    comm.finish_exchange();
    double slowest[1] = {pdsp::seconds_since(start)};
    comm.allreduce({}, slowest);
    seconds.push_back(slowest[0]);
  }
  return median(seconds);
}

double time_allreduce(pdsp::Communicator& comm, int repeats) {
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    comm.barrier();
    double sums[3] = {1.0, 2.0, 3.0};
    const auto start = pdsp::Clock::now();
    comm.allreduce(sums, {});
    seconds.push_back(pdsp::seconds_since(start));
  }
  return median(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  pdsp::MpiCommunicator comm(&argc, &argv);
  const int repeats = argc > 1 ? std::stoi(argv[1]) : 200;
  if (comm.size() < 2) {
    if (comm.is_root())
      std::fprintf(stderr, "%s: run under mpirun with 2 or more ranks\n", argv[0]);
    return 2;
  }
  // Least squares of seconds on bytes over the sizes: latency and seconds per byte.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  if (comm.is_root())
    std::printf(
        "# pdsp_bench_halo: %d ranks in pairs, %d repeats, median of the slowest rank\n"
        "%10s %12s %12s\n",
        comm.size(), repeats, "bytes", "us/exchange", "MB/s");
  for (int64_t count = 1; count <= (int64_t{1} << 20); count *= 4) {
    const double seconds =
        time_exchange(comm, count, count >= (1 << 16) ? repeats / 10 + 1 : repeats);
    const double bytes = 8.0 * static_cast<double>(count);
    n += 1;
    sx += bytes;
    sy += seconds;
    sxx += bytes * bytes;
    sxy += bytes * seconds;
    if (comm.is_root())
      std::printf("%10.0f %12.2f %12.1f\n", bytes, 1e6 * seconds, bytes / seconds / 1e6);
  }
  const double per_byte = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  // The latency from the smallest message alone: the fit's intercept is dominated by the large
  // sizes' noise.
  const double latency = time_exchange(comm, 1, repeats);
  const double allreduce = time_allreduce(comm, repeats);
  if (comm.is_root())
    std::printf("latency_s %.6e\nseconds_per_byte %.6e\nallreduce_s %.6e\n", latency, per_byte,
                allreduce);
  return 0;
}
