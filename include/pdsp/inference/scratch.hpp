#pragma once
// Per-thread scratch vectors that never share a cache line with anything else. Small buffers of
// two threads (a variable's states, one factor table) can otherwise land side by side on the
// heap, and then every write by one thread invalidates the other's copy of the line: the
// general kernels measured no faster on two threads than on one before this.
#include <cstddef>
#include <new>
#include <vector>

namespace pdsp {

inline constexpr std::size_t kCacheLine = 64;

// Allocates whole cache lines, aligned to a line.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
    return static_cast<T*>(::operator new (bytes, std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{kCacheLine}); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

using ScratchVector = std::vector<double, CacheLineAllocator<double>>;

}  // namespace pdsp
