#include "pdsp/app/progress.hpp"

#include <cstdio>

namespace pdsp {

Progress::Progress(bool enabled, std::string what) : enabled_(enabled), what_(std::move(what)) {}

void Progress::update(const std::string& detail) {
  if (!enabled_ || seconds_since(last_) < kEverySeconds) return;
  last_ = Clock::now();
  std::printf("%s: %s (%.0f s)\n", what_.c_str(), detail.c_str(), seconds_between(start_, last_));
  std::fflush(stdout);
}

}  // namespace pdsp
