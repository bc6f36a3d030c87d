#pragma once
// Large allocations whose size comes from an input file (a parameter count, a dataset's length,
// the messages of a slice). A size this process cannot hold, or an allocation that fails, becomes
// an InputError that names the file, what was being allocated and how much, instead of
// std::bad_alloc, or, when the kernel overcommits memory, the OOM killer once it is touched.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pdsp/util/huge_pages.hpp"

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

// A fixed-size array of zeros from calloc, which takes large blocks as fresh pages from the
// kernel without writing them: pages that are never written cost no memory. For arrays with
// parts nothing touches, as the potentials and beliefs of the factors that read a shared table
// (OCR's test set: 223 MB of tables each, of which the representative factors use a few).
template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>, "all-zero bytes must be a value of T");

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t size)
      : data_(static_cast<T*>(std::calloc(size, sizeof(T)))), size_(size) {
    if (size > 0 && data_ == nullptr) throw std::bad_alloc();
  }
  // A moved-from array is empty.
  ZeroedArray(ZeroedArray&& other) noexcept
      : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
  size_t size_ = 0;
};

// `count` zeros whose pages cost memory only once written (ZeroedArray).
template <class T>
ZeroedArray<T> allocate_zeroed(const std::string& source, const std::string& what, int64_t count) {
  return allocate(source, what, static_cast<double>(count) * static_cast<double>(sizeof(T)),
                  [&] { return ZeroedArray<T>(static_cast<size_t>(count)); });
}

// `count` copies of `value`, on huge pages when large (huge_pages.hpp).
template <class T, class Vector = std::vector<T>>
Vector allocate_vector(const std::string& source, const std::string& what, int64_t count,
                       const T& value = T{}) {
  return allocate(source, what, static_cast<double>(count) * static_cast<double>(sizeof(T)), [&] {
    Vector values;
    resize_on_huge_pages(values, static_cast<size_t>(count), value);
    return values;
  });
}

}  // namespace pdsp
