#pragma once
// The clock of every phase time pdsp logs or records: a monotonic wall clock, in seconds.
#include <chrono>

namespace pdsp {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

inline double seconds_since(Clock::time_point start) {
  return seconds_between(start, Clock::now());
}

}  // namespace pdsp
