#include "pdsp/parallel/communicator.hpp"

#include <cstdlib>
#include <stdexcept>

namespace pdsp {

double Communicator::allreduce_sum(double value) {
  double buffer[1] = {value};
  allreduce(buffer, {});
  return buffer[0];
}

void SerialCommunicator::start_exchange(std::span<const int> peers,
                                        std::span<const std::span<const double>>,
                                        std::span<const std::span<double>>) {
  if (!peers.empty()) throw std::logic_error("a serial run has no rank to exchange with");
}

void SerialCommunicator::abort(int exit_code) {
  std::exit(exit_code);
}

}  // namespace pdsp
