#pragma once
// Large allocations whose size comes from an input file (a parameter count, a dataset's length,
// the messages of a slice). A size this process cannot hold, or an allocation that fails, becomes
// an InputError that names the file, what was being allocated and how much, instead of
// std::bad_alloc, or, when the kernel overcommits memory, the OOM killer once it is touched.
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace pdsp {

// "512 bytes", "3.5 MiB", "16.0 GiB".
std::string format_bytes(double bytes);

// What this process may still allocate: the kernel's estimate of the memory available without
// swapping (MemAvailable), capped by the address-space limit (ulimit -v) when one is set.
double available_memory_bytes();

// Throws InputError "<source>: cannot allocate <bytes> for <what>: <reason>".
[[noreturn]] void throw_allocation_error(const std::string& source, const std::string& what,
                                         double bytes, const std::string& reason);

// Allocations from this size up are checked against the memory available; smaller ones are
// not (reading the kernel's estimate would cost more than they do).
inline constexpr double kLargeAllocationBytes = 64.0 * 1024 * 1024;

// Throws that error when `bytes` (if large) is more than available_memory_bytes().
void check_allocation(const std::string& source, const std::string& what, double bytes);

// Runs make(), which allocates about `bytes`, once they are known to fit; a std::bad_alloc it
// throws becomes the same error.
template <class Make>
auto allocate(const std::string& source, const std::string& what, double bytes, Make&& make) {
  check_allocation(source, what, bytes);
  try {
    return make();
  } catch (const std::bad_alloc&) {
    throw_allocation_error(source, what, bytes, "out of memory");
  }
}

// `count` copies of `value`.
template <class T>
std::vector<T> allocate_vector(const std::string& source, const std::string& what, int64_t count,
                               const T& value = T{}) {
  return allocate(source, what, static_cast<double>(count) * static_cast<double>(sizeof(T)),
                  [&] { return std::vector<T>(static_cast<size_t>(count), value); });
}

}  // namespace pdsp
