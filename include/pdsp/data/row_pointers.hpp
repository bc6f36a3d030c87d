#pragma once
// CSR row pointers whose zeros cost no memory until written. A data set of format 2 without
// feature rows still has a row per table entry, each empty: on a 5-million-parameter chain of
// 22 labels that is 100 million zero pointers, 400 MB that std::vector would write.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "pdsp/data/local_index.hpp"

namespace pdsp {

// Storage from calloc, which takes large blocks as fresh zero pages from the kernel without
// writing them. An element value-initialised (the count constructor) is left as calloc gave it,
// zero, and not even read: under some hypervisors and sandboxes a read fault on a fresh page
// commits it as a write would (an 822 MB array of the citations' factor rows was all resident).
// So RowPointers are never shrunk and grown again in place, where a slot would keep an old
// value: they are read, built by push_back or made by the count constructor.
template <class T>
struct ZeroPageAllocator {
  using value_type = T;
  ZeroPageAllocator() = default;
  template <class U>
  explicit ZeroPageAllocator(const ZeroPageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    void* p = std::calloc(n, sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  template <class U>
  void construct(U*) noexcept {}
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const ZeroPageAllocator&, const ZeroPageAllocator&) { return true; }
};

using RowPointers = std::vector<LocalIndex, ZeroPageAllocator<LocalIndex>>;

}  // namespace pdsp
