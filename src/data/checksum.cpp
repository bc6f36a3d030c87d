#include "pdsp/data/checksum.hpp"

#include <cstdio>

namespace pdsp {

void Checksum::combine(Communicator& comm) {
  comm.allreduce_sum(std::span<int64_t>(lanes_));
}

uint64_t Checksum::value() const {
  uint64_t total = 0;
  for (int lane = 0; lane < 4; ++lane) total += static_cast<uint64_t>(lanes_[lane]) << (16 * lane);
  return total;
}

std::string Checksum::hex() const {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value()));
  return text;
}

}  // namespace pdsp
