#pragma once
// One structured message from rank 0 to all: rank 0 fills a value (reading files no other rank
// reads, so all ranks act on one view of a file system that may change under them), Boost
// serialises it in memory and the communicator broadcasts it. An InputError on rank 0 travels
// in the same message and is rethrown on every rank, printed once.
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <sstream>
#include <string>

#include "pdsp/parallel/communicator.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

// `T` is default-constructible and has a Boost `serialize` member. Collective.
template <class T, class Fill>
T share_from_root(Communicator& comm, Fill&& fill) {
  T value{};
  std::string error;
  std::string bytes;
  if (comm.is_root()) {
    try {
      fill(value);
    } catch (const InputError& failure) {
      error = failure.what();
      if (error.empty()) error = "unknown error";
    }
  }
  // Alone, the value is already where it goes. A resumed checkpoint's view can be most of a
  // rank's memory (the citations' L-BFGS memory: 800 MB): the bytes move into and out of the
  // streams rather than being copied.
  if (comm.size() > 1) {
    if (comm.is_root()) {
      std::ostringstream out;
      boost::archive::binary_oarchive archive(out);
      archive << error << value;
      bytes = std::move(out).str();
    }
    comm.broadcast_from_root(bytes);
    if (!comm.is_root()) {
      std::istringstream in(std::move(bytes));
      boost::archive::binary_iarchive archive(in);
      archive >> error >> value;
    }
  }
  if (!error.empty()) throw CollectiveError(error, comm.is_root());
  return value;
}

}  // namespace pdsp
