#include "pdsp/data/checksum.hpp"

#include <cstdio>

namespace pdsp {
namespace {

// splitmix64 finaliser: a well-mixed 64-bit function of its input.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void Checksum::add_word(uint64_t array_tag, int64_t position, uint64_t bits) {
  const uint64_t h = mix(mix(array_tag ^ mix(static_cast<uint64_t>(position))) ^ bits);
  for (int lane = 0; lane < 4; ++lane)
    lanes_[lane] += static_cast<int64_t>((h >> (16 * lane)) & 0xffff);
}

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
