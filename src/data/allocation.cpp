#include "pdsp/data/allocation.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// MemAvailable of /proc/meminfo (Linux), else the free physical pages.
double kernel_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::string format_bytes(double bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(static_cast<int64_t>(bytes)) + " bytes";
  int unit = -1;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", bytes, kUnits[unit]);
  return text;
}

double available_memory_bytes() {
  double available = kernel_available_bytes();
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    available = std::min(available, static_cast<double>(limit.rlim_cur));
  return available;
}

void throw_allocation_error(const std::string& source, const std::string& what, double bytes,
                            const std::string& reason) {
  throw InputError(source + ": cannot allocate " + format_bytes(bytes) + " for " + what + ": " +
                   reason);
}

void check_allocation(const std::string& source, const std::string& what, double bytes) {
  if (bytes < kLargeAllocationBytes) return;
  const double available = available_memory_bytes();
  if (bytes > available)
    throw_allocation_error(source, what, bytes,
                           "only " + format_bytes(available) + " of memory is available");
}

}  // namespace pdsp
