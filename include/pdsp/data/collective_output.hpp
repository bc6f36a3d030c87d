#pragma once
// One HDF5 output file that every rank fills with its own slice: rank 0 creates it under a
// temporary name all ranks agree on, the ranks write in turn (serial HDF5, so no rank holds more
// than its slice), and rank 0 moves it into place. Until commit() the user's file is untouched.
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

}  // namespace pdsp
