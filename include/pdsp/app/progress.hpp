#pragma once
// A progress line for long work (loading, generating, predicting): printed on the root rank at
// most every few seconds, so short runs print nothing, and never with --quiet.
#include <string>

#include "pdsp/util/clock.hpp"

namespace pdsp {

class Progress {
 public:
  static constexpr double kEverySeconds = 3.0;

  // `enabled`: root rank and not --quiet. `what` starts every line ("pdsp predict").
  Progress(bool enabled, std::string what);
  // Prints `what: detail (T s)` when kEverySeconds have passed since the start or the last line.
  void update(const std::string& detail);

 private:
  bool enabled_;
  std::string what_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace pdsp
