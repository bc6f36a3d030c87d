#include "pdsp/util/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace pdsp {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{1} << 21;
// Smaller ranges are not worth a system call: they hold at most a few huge pages.
constexpr size_t kAdviceFloor = 4 * kHugePage;

}  // namespace

void advise_huge_pages(const void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (data == nullptr || bytes < kAdviceFloor) return;
  const auto start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (start + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (start + bytes) & ~(kHugePage - 1);
  // A refusal (an old kernel, huge pages compiled out) leaves ordinary pages: nothing to report.
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace pdsp
