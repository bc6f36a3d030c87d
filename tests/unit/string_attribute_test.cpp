// pdsp writes every string attribute fixed-length. A variable-length string lives in a global
// heap that libhdf5 1.10 follows without checking: one flipped bit there crashes the library
// (and h5dump, and h5py) on read, which no reader can catch. Fixed-length text is stored in the
// attribute itself, where damage only changes the value.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/learning/checkpoint.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp {
namespace {
namespace fs = std::filesystem;

std::string temporary(const std::string& name) {
  return (fs::temp_directory_path() / ("pdsp_strings_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct StringAttributes {
  int fixed = 0;
  std::vector<std::string> variable;  // names of variable-length ones
};

// Counts the root attributes of `path` that hold text, by their storage.
StringAttributes string_attributes(const std::string& path) {
  StringAttributes found;
  const h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  EXPECT_GE(file.get(), 0) << path;
  H5Aiterate2(
      file.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
      [](hid_t object, const char* name, const H5A_info_t*, void* out) -> herr_t {
        auto& strings = *static_cast<StringAttributes*>(out);
        const h5::Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
        const h5::Handle type(H5Aget_type(attribute.get()), H5Tclose);
        if (H5Tget_class(type.get()) != H5T_STRING) return 0;
        if (H5Tis_variable_str(type.get()) > 0)
          strings.variable.emplace_back(name);
        else
          ++strings.fixed;
        return 0;
      },
      &found);
  return found;
}

TEST(StringAttributes, TheHdf5LayerWritesTextFixedLength) {
  const std::string path = temporary("layer.h5");
  {
    h5::File file = h5::File::create(path);
    file.write_attribute("format", std::string("pdsp-dataset"));
    file.write_attribute("empty", std::string());
  }
  const StringAttributes found = string_attributes(path);
  EXPECT_EQ(found.fixed, 2);
  EXPECT_TRUE(found.variable.empty()) << found.variable.front();
  const h5::File file = h5::File::open_read(path);
  EXPECT_EQ(file.read_string_attribute("empty"), "");
  fs::remove(path);
}

TEST(StringAttributes, DataSetsAndCheckpointsHoldNoVariableLengthText) {
  const Dataset data = testing::random_dataset({testing::chain_shape(3)}, 4, 1);
  const std::string dataset = temporary("data.h5");
  write_dataset(dataset, data);
  Checkpoint c;
  c.state.theta = {0.5, 0.25, 0.0, -1.0};
  c.state.stop = stop_iteration_limit();
  c.metrics_checksum = "0123";
  c.config_line = "epsilon=1";
  c.compatibility = {{"epsilon", "1"}};
  c.data_fingerprint = "fingerprint";
  const std::string checkpoint = temporary("ckpt.h5");
  SerialCommunicator serial;
  write_checkpoint(checkpoint, c, std::vector<double>(6, 0.0), serial);
  for (const std::string& path : {dataset, checkpoint}) {
    const StringAttributes found = string_attributes(path);
    EXPECT_GT(found.fixed, 0) << path;
    EXPECT_TRUE(found.variable.empty()) << path << ": @" << found.variable.front();
    fs::remove(path);
  }
}

}  // namespace
}  // namespace pdsp
