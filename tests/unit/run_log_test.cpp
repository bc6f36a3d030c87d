// The training log flags an iteration whose accepted point has examples with a negative
// approximate NLL, on the console and in the metrics; an iteration without them gets no flag.
#include "pdsp/app/run_log.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace pdsp {
namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RunLog, FlagsIterationsWithANegativeApproximateNll) {
  const std::filesystem::path metrics =
      std::filesystem::path(::testing::TempDir()) / "run_log_negative_nll.jsonl";
  std::filesystem::remove(metrics);
  IterationRecord clean;
  clean.iteration = 1;
  clean.negative_nll_examples = 0;
  clean.lowest_nll = 12.5;
  IterationRecord flagged = clean;
  flagged.iteration = 2;
  flagged.negative_nll_examples = 3;
  flagged.lowest_nll = -4.25;
  flagged.all_start_searches = 1;  // -1 in the first: null, as every learner but L-BFGS's
  ::testing::internal::CaptureStdout();
  {
    RunLog log(true, true, metrics.string(), R"({"type":"run"})", -1, "", "L");
    log.on_iteration(clean);
    log.on_iteration(flagged);
  }
  const std::string console = ::testing::internal::GetCapturedStdout();
  const std::string flag = "3 example(s) with a negative approximate NLL (lowest -4.25)";
  EXPECT_NE(console.find(flag), std::string::npos) << console;
  EXPECT_EQ(console.find("negative approximate NLL"), console.rfind("negative approximate NLL"))
      << "only the flagged iteration has the line: " << console;

  const std::string lines = read_all(metrics);
  const size_t second = lines.find(R"("iteration":2)");
  ASSERT_NE(second, std::string::npos) << lines;
  EXPECT_NE(lines.find(R"("negative_nll_examples":0)"), std::string::npos) << lines;
  EXPECT_NE(lines.find(R"("negative_nll_examples":3)", second), std::string::npos) << lines;
  EXPECT_NE(lines.find(R"("lowest_nll":-4.25)", second), std::string::npos) << lines;
  EXPECT_LT(lines.find(R"("all_start_searches":null)"), second) << lines;
  EXPECT_NE(lines.find(R"("all_start_searches":1)", second), std::string::npos) << lines;
  std::filesystem::remove(metrics);
}

}  // namespace
}  // namespace pdsp
