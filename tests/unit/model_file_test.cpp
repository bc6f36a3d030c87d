// The hyper-parameters a model file hands to predict are checked where the file is read, so that
// the error names the file and the attribute.
#include "pdsp/data/model_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/util/errors.hpp"
#include "support/test_helpers.hpp"

namespace pdsp {
namespace {

using testing::error_of;

// A model file written with the HDF5 layer directly, with `epsilon` and `counting` as given.
std::string model_file(double epsilon, const std::string& counting = "uniform") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pdsp_model_file_" + std::to_string(::getpid()) + ".h5"))
                               .string();
  h5::File file = h5::File::create(path);
  file.write_attribute("format", std::string(kModelFormat));
  file.write_attribute("format_version", kModelFormatVersion);
  file.write_attribute("epsilon", epsilon);
  file.write_attribute("counting", counting);
  file.write("/theta", std::vector<double>{0.5, 0.25});
  return path;
}

TEST(ModelFile, AnEpsilonThatIsNotATemperatureIsRefusedByName) {
  for (const double epsilon : {double{INFINITY}, double{NAN}, -1.0, 1e-300}) {
    const std::string path = model_file(epsilon);
    EXPECT_EQ(error_of([&] { (void)read_model(path); }),
              path + ": @epsilon: is " + number_text(epsilon) +
                  ", not a temperature (0 or a finite number >= 1e-12)");
    std::filesystem::remove(path);
  }
  const std::string path = model_file(0.0);
  EXPECT_EQ(read_model(path).epsilon, 0.0);
  std::filesystem::remove(path);
}

TEST(ModelFile, ACountingThatNamesNoModeIsRefusedByName) {
  const std::string path = model_file(1.0, "text");
  EXPECT_EQ(error_of([&] { (void)read_model(path); }),
            path + ": @counting: is 'text', not one of " + kCountingModeNames);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace pdsp
