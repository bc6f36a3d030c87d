#pragma once
// The peak resident memory of this process (Linux VmHWM), for the run summary and the memory
// targets of docs/benchmarks.md.
#include <cstdint>

namespace pdsp {
// Bytes, or -1 where /proc/self/status has no VmHWM line.
int64_t peak_resident_bytes();
}  // namespace pdsp
