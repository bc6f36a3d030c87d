// Progress lines: none for work shorter than the interval, one line after it, none when quiet.
#include "pdsp/app/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace pdsp {
namespace {

TEST(Progress, PrintsOnlyAfterTheIntervalAndNeverWhenDisabled) {
  Progress shown(true, "pdsp test");
  Progress quiet(false, "pdsp quiet");
  ::testing::internal::CaptureStdout();
  shown.update("early");
  quiet.update("early");
  std::this_thread::sleep_for(std::chrono::duration<double>(Progress::kEverySeconds + 0.05));
  shown.update("stage two");
  shown.update("right after");
  quiet.update("stage two");
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed, "pdsp test: stage two (3 s)\n");
}

}  // namespace
}  // namespace pdsp
