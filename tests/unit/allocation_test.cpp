// Sizes read from a file that no process could hold are refused in one line that names the
// file, what was being allocated and how much, before anything is allocated; an allocation that
// fails anyway says the same instead of std::bad_alloc.
#include "pdsp/data/allocation.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/util/errors.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::error_of;

TEST(Allocation, BytesAreWrittenInTheLargestWholeUnit) {
  EXPECT_EQ(format_bytes(512), "512 bytes");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(16.0 * 1024 * 1024 * 1024), "16.0 GiB");
}

TEST(Allocation, ASizeBeyondTheAvailableMemoryIsRefusedBeforeAllocating) {
  const std::string message = error_of(
      [] { (void)allocate_vector<double>("x.h5", "the things (2^60 values)", int64_t{1} << 60); });
  EXPECT_EQ(message.rfind("x.h5: cannot allocate 8.0 EiB for the things (2^60 values): only ", 0),
            0u)
      << message;
  EXPECT_NE(message.find("of memory is available"), std::string::npos) << message;
}

TEST(Allocation, AFailedAllocationBecomesTheSameOneLineError) {
  const std::string message =
      error_of([] { allocate("x.h5", "a table", 4096, []() -> int { throw std::bad_alloc(); }); });
  EXPECT_EQ(message, "x.h5: cannot allocate 4.0 KiB for a table: out of memory");
}

// 2^40 parameters need 8 TiB per theta-sized vector: refused by @num_params, with the
// parameters the features really use, before the feature index allocates anything.
TEST(Allocation, AParameterCountNoRankCanHoldNamesNumParamsAndTheParametersUsed) {
  DatasetBuilder builder(int64_t{1} << 40);
  builder.begin_example();
  const int64_t a = builder.add_variable(2, 0, {{{3, 1.0}}, {{17, -1.0}}});
  const int64_t b = builder.add_variable(2, 1);
  builder.add_factor({a, b});
  Dataset data = builder.finish();
  data.file_path = "big.h5";
  const std::string message = error_of([&] { FeatureIndex index(data); });
  EXPECT_EQ(message.rfind("big.h5: @num_params: 1099511627776 parameters need 64.0 TiB on every "
                          "rank (8 vectors of one double per parameter), but only ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("use parameters up to 17"), std::string::npos) << message;
}

// This process's resident memory in bytes (Linux: /proc/self/statm, in pages).
double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

TEST(ZeroedArray, IsAllZerosAndCostsMemoryOnlyWhereWritten) {
  const size_t count = size_t{32} << 20;  // 256 MiB of doubles
  const double before = resident_bytes();
  ZeroedArray<double> a =
      allocate_zeroed<double>("x.h5", "the tables", static_cast<int64_t>(count));
  ASSERT_EQ(a.size(), count);
  a[count / 2] = 1.5;
  EXPECT_LT(resident_bytes() - before, 16.0 * 1024 * 1024) << "untouched pages must stay free";
  EXPECT_EQ(a[0], 0.0);
  EXPECT_EQ(a[count - 1], 0.0);
  ZeroedArray<double> moved = std::move(a);
  EXPECT_EQ(moved[count / 2], 1.5);
  EXPECT_TRUE(a.empty());
  const ZeroedArray<int> small(5);
  for (int x : small) EXPECT_EQ(x, 0);
}

}  // namespace
}  // namespace pdsp
