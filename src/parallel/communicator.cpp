#include "pdsp/parallel/communicator.hpp"

#include <cstdlib>

namespace pdsp {

double Communicator::allreduce_sum(double value) {
  double buffer[1] = {value};
  allreduce(buffer, {});
  return buffer[0];
}

void SerialCommunicator::abort(int exit_code) {
  std::exit(exit_code);
}

}  // namespace pdsp
