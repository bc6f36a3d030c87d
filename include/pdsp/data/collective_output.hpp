#pragma once
// One HDF5 output file that every rank fills with its own slice: rank 0 creates it under a
// temporary name all ranks agree on, the ranks write in turn (serial HDF5, so no rank holds more
// than its slice), and rank 0 moves it into place. Until commit() the user's file is untouched.
// Results use write_collective_output, which adds a rescue copy; checkpoints use the class.
#include <functional>
#include <memory>
#include <string>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class CollectiveOutput {
 public:
  // Collective: `create` runs on rank 0 only, on the new temporary file.
  CollectiveOutput(const std::string& path, Communicator& comm,
                   const std::function<void(h5::File&)>& create);
  // Collective: `write` runs on every rank, one rank at a time, on the temporary file.
  void write_in_turn(const std::function<void(h5::File&)>& write);
  // Collective: rank 0 fsyncs and renames the finished file into place.
  void commit();

 private:
  Communicator& comm_;
  std::string temporary_;
  std::unique_ptr<AtomicFile> output_;  // rank 0 only
};

// Collective: writes `path` with a CollectiveOutput (`create` on rank 0, then `write` on every
// rank in turn). When the file cannot be created or written (the directory removed or made
// read-only during a long run, the disk full), the same output is written again to rank 0's
// first usable rescue path (see rescue_paths), and the CollectiveError names it. A finished file
// that cannot be renamed into place is kept under its temporary name, which the error names.
void write_collective_output(const std::string& path, Communicator& comm,
                             const std::function<void(h5::File&)>& create,
                             const std::function<void(h5::File&)>& write);

}  // namespace pdsp
