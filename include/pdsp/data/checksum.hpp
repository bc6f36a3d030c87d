#pragma once
// A checksum that slices computed on different ranks combine into by addition: the sum over
// elements of mix(array, global position, bits) modulo 2^64. Any changed, moved or swapped
// element changes it (up to 2^-64 chance), and it does not depend on how an array was split.
#include <bit>
#include <cstdint>
#include <span>
#include <string>

#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class Checksum {
 public:
  template <class T>
  void add(uint64_t array_tag, int64_t first_position, std::span<const T> values) {
    for (size_t i = 0; i < values.size(); ++i)
      add_word(array_tag, first_position + static_cast<int64_t>(i), bits_of(values[i]));
  }
  void add_word(uint64_t array_tag, int64_t position, uint64_t bits);
  // Adds the partial checksums of every rank. Collective.
  void combine(Communicator& comm);
  uint64_t value() const;
  std::string hex() const;

 private:
  template <class T>
  static uint64_t bits_of(T x) {
    if constexpr (sizeof(T) == 8)
      return std::bit_cast<uint64_t>(x);
    else
      return static_cast<uint64_t>(std::bit_cast<uint32_t>(x));
  }
  // Four 16-bit lanes summed separately, so the cross-rank sum never overflows an int64.
  int64_t lanes_[4] = {0, 0, 0, 0};
};

}  // namespace pdsp
