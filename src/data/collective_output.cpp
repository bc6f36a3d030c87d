#include "pdsp/data/collective_output.hpp"

#include <unistd.h>

#include <optional>

namespace pdsp {

CollectiveOutput::CollectiveOutput(const std::string& path, Communicator& comm,
                                   const std::function<void(h5::File&)>& create)
    : comm_(comm) {
  // Rank 0's process id names the temporary file for every rank.
  int64_t tag[1] = {comm.is_root() ? static_cast<int64_t>(::getpid()) : 0};
  comm.allreduce_sum(std::span<int64_t>(tag));
  temporary_ = path + ".tmp." + std::to_string(tag[0]);
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    output_ = std::make_unique<AtomicFile>(path, std::to_string(tag[0]));
    h5::File file = h5::File::create(temporary_);
    create(file);
  });
}

void CollectiveOutput::write_in_turn(const std::function<void(h5::File&)>& write) {
  for (int turn = 0; turn < comm_.size(); ++turn)
    run_collectively(comm_, [&] {
      if (comm_.rank() != turn) return;
      h5::File file = h5::File::open_write(temporary_);
      write(file);
    });
}

void CollectiveOutput::commit() {
  run_collectively(comm_, [&] {
    if (output_) output_->commit();
  });
}

void write_collective_output(const std::string& path, Communicator& comm,
                             const std::function<void(h5::File&)>& create,
                             const std::function<void(h5::File&)>& write) {
  std::optional<CollectiveError> failure;
  {
    std::optional<CollectiveOutput> output;
    try {
      output.emplace(path, comm, create);
      output->write_in_turn(write);
    } catch (const CollectiveError& error) {
      failure = error;
    }
    if (!failure) {
      output->commit();
      return;
    }
  }  // the unfinished temporary file is removed here
  // Rank 0 chooses the rescue paths, so every rank writes into the same file.
  std::vector<std::string> rescues = rescue_paths(path);
  for (std::string& rescue : rescues) comm.broadcast_from_root(rescue);
  for (const std::string& rescue : rescues) {
    try {
      CollectiveOutput copy(rescue, comm, create);
      copy.write_in_turn(write);
      copy.commit();
    } catch (const CollectiveError&) {
      continue;
    }
    throw CollectiveError(
        std::string(failure->what()) + "; the result was saved as " + rescue + " instead",
        failure->reporter());
  }
  throw CollectiveError(std::string(failure->what()) +
                            "; no rescue copy could be written either (working directory and "
                            "temporary directory failed too)",
                        failure->reporter());
}

}  // namespace pdsp
