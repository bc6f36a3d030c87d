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
  // Inline and summed modulo 2^64 in one local, so that it vectorises and large arrays are
  // shared by the OpenMP threads (checkpoints of gigabytes are checksummed when written and
  // verified when read); the lanes only carry the sum exactly through the signed cross-rank
  // addition.
  template <class T>
  void add(uint64_t array_tag, int64_t first_position, std::span<const T> values) {
    uint64_t sum = 0;
    const auto n = static_cast<int64_t>(values.size());
#pragma omp parallel for reduction(+ : sum) if (n > (1 << 20))
    for (int64_t i = 0; i < n; ++i)
      sum += element_hash(array_tag, first_position + i, bits_of(values[i]));
    add_sum(sum);
  }
  // The same as add() of the int64 values values[i] + shift, without making them: local
  // offsets are hashed as the global positions they stand for.
  template <class Index>
  void add_shifted(uint64_t array_tag, int64_t first_position, std::span<const Index> values,
                   int64_t shift) {
    uint64_t sum = 0;
    const auto n = static_cast<int64_t>(values.size());
#pragma omp parallel for reduction(+ : sum) if (n > (1 << 20))
    for (int64_t i = 0; i < n; ++i)
      sum += element_hash(array_tag, first_position + i,
                          std::bit_cast<uint64_t>(static_cast<int64_t>(values[i]) + shift));
    add_sum(sum);
  }
  // `count` elements of one value at consecutive positions: what add_shifted gives for `count`
  // zeros shifted by `value`.
  void add_repeated(uint64_t array_tag, int64_t first_position, int64_t count, int64_t value) {
    uint64_t sum = 0;
    const uint64_t bits = std::bit_cast<uint64_t>(value);
#pragma omp parallel for reduction(+ : sum) if (count > (1 << 20))
    for (int64_t i = 0; i < count; ++i) sum += element_hash(array_tag, first_position + i, bits);
    add_sum(sum);
  }
  // One element, without the OpenMP region: the metrics log adds its lines byte by byte.
  void add_word(uint64_t array_tag, int64_t position, uint64_t bits) {
    add_sum(element_hash(array_tag, position, bits));
  }
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
  // splitmix64's finaliser: a well-mixed 64-bit function of its input.
  static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  static uint64_t element_hash(uint64_t array_tag, int64_t position, uint64_t bits) {
    return mix(mix(array_tag ^ mix(static_cast<uint64_t>(position))) ^ bits);
  }
  void add_sum(uint64_t sum) {
    for (int lane = 0; lane < 4; ++lane)
      lanes_[lane] += static_cast<int64_t>((sum >> (16 * lane)) & 0xffff);
  }
  // Four 16-bit lanes summed separately, so the cross-rank sum never overflows an int64.
  int64_t lanes_[4] = {0, 0, 0, 0};
};

}  // namespace pdsp
