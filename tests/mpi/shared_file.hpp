#pragma once
// A data set file every rank of the multi-rank tests can read: rank 0 writes it under a name all
// ranks agree on (rank 0's process id), and the ranks meet before anyone reads it.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "mpi/mpi_world.hpp"
#include "pdsp/data/dataset_io.hpp"

namespace pdsp::testing {

inline std::string shared_file(const std::string& stem, const Dataset& data) {
  Communicator& comm = world();
  int64_t pid[1] = {comm.is_root() ? static_cast<int64_t>(::getpid()) : 0};
  comm.allreduce_sum(std::span<int64_t>(pid));
  const std::string path =
      (std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(pid[0]) + ".h5"))
          .string();
  if (comm.is_root()) write_dataset(path, data);
  comm.barrier();
  return path;
}

}  // namespace pdsp::testing
