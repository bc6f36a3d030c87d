#pragma once
// Large arrays on transparent huge pages. A fresh 4 KiB page costs a fault when first written,
// and under a hypervisor each fault is slow: on this project's 2-core VM the first touch of the
// L-BFGS pairs of a 20-million-parameter model took 2-3 s of each of the first ten iterations
// (perf: a third of the time in the kernel's fault path and page clearing). Advised ranges get
// 2 MiB pages where the kernel allows them (transparent_hugepage set to madvise or always), 512
// times fewer faults; elsewhere the advice is ignored and nothing changes.
#include <cstddef>
#include <vector>

namespace pdsp {

// Asks for huge pages on the whole 2 MiB-aligned pages inside [data, data + bytes); below a few
// huge pages it does nothing.
void advise_huge_pages(const void* data, size_t bytes);

// v.reserve(n) with the storage advised before any of it is written (the advice must come
// before the first touch of a page).
template <class T, class Allocator>
void reserve_on_huge_pages(std::vector<T, Allocator>& v, size_t n) {
  if (v.capacity() >= n) return;
  std::vector<T, Allocator> fresh;
  fresh.reserve(n);
  advise_huge_pages(fresh.data(), n * sizeof(T));
  fresh.insert(fresh.end(), v.begin(), v.end());
  v.swap(fresh);
}

// v.resize(n, value), its storage reserved as above when it must grow.
template <class T, class Allocator>
void resize_on_huge_pages(std::vector<T, Allocator>& v, size_t n, const T& value = T()) {
  reserve_on_huge_pages(v, n);
  v.resize(n, value);
}

}  // namespace pdsp
