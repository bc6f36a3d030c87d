#pragma once
// Template body of run_collectively (included by communicator.hpp).
#include <limits>

#include "pdsp/util/errors.hpp"

namespace pdsp {

template <class Work>
void run_collectively(Communicator& comm, Work&& work) {
  std::string message;
  try {
    work();
  } catch (const InputError& error) {
    message = error.what();
  }
  // Lowest failing rank, found with a max-reduction of (-rank) over the failing ranks.
  double failing[1] = {message.empty() ? -std::numeric_limits<double>::infinity()
                                       : -static_cast<double>(comm.rank())};
  comm.allreduce({}, failing);
  if (failing[0] == -std::numeric_limits<double>::infinity()) return;
  const int reporter = static_cast<int>(-failing[0]);
  throw CollectiveError(message, comm.rank() == reporter);
}

}  // namespace pdsp
