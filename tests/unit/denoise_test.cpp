// The denoising generator: copies cycle through the sizes of --sizes, one size reproduces
// --height/--width exactly, and bad sizes are one-line InputErrors naming the flag.
#include "pdsp/gen/denoise.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pdsp/util/errors.hpp"

namespace {

using pdsp::DenoiseOptions;
using pdsp::ImageSize;
using pdsp::InputError;

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Denoise, CopiesCycleThroughTheListedSizes) {
  DenoiseOptions options;
  options.sizes = {{2, 3}, {4, 4}, {1, 5}};
  options.images = {1, 3};
  options.copies = 7;
  options.params = pdsp::Parameterization::Shared;
  const pdsp::Dataset data = pdsp::generate_denoise(options);
  ASSERT_EQ(data.num_examples(), 14);
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    const int image = options.images[n / 7];
    const ImageSize size = options.sizes[(n % 7) % 3];  // copy i of each image: size i mod 3
    const int64_t h = size.height, w = size.width;
    const int64_t first = data.var_offset[n];
    ASSERT_EQ(data.var_offset[n + 1] - first, h * w) << "example " << n;
    EXPECT_EQ(data.factor_offset[n + 1] - data.factor_offset[n], h * (w - 1) + (h - 1) * w)
        << "example " << n;
    // The labels are the base image rendered at this size.
    const std::vector<int32_t> truth = pdsp::base_image(image, size.height, size.width);
    EXPECT_EQ(std::vector<int32_t>(data.label.begin() + first, data.label.begin() + first + h * w),
              truth)
        << "example " << n;
  }
  EXPECT_EQ(data.num_params, 3);
}

TEST(Denoise, OneListedSizeIsTheSameAsHeightAndWidth) {
  DenoiseOptions by_flags;
  by_flags.height = 6;
  by_flags.width = 5;
  by_flags.copies = 3;
  DenoiseOptions by_sizes = by_flags;
  by_sizes.height = by_sizes.width = 64;  // ignored when sizes is given
  by_sizes.sizes = {{6, 5}};
  EXPECT_EQ(pdsp::denoise_num_params(by_sizes), pdsp::denoise_num_params(by_flags));
  const pdsp::Dataset a = pdsp::generate_denoise(by_flags);
  const pdsp::Dataset b = pdsp::generate_denoise(by_sizes);
  EXPECT_EQ(a.num_params, b.num_params);
  EXPECT_EQ(a.var_offset, b.var_offset);
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.var_features.param, b.var_features.param);
  EXPECT_EQ(a.var_features.value, b.var_features.value);
  EXPECT_EQ(a.factor_vars, b.factor_vars);
  EXPECT_EQ(a.factor_features.param, b.factor_features.param);
}

TEST(Denoise, ParsesSizeLists) {
  EXPECT_EQ(pdsp::parse_image_sizes("16x16,32x8,256x256"),
            (std::vector<ImageSize>{{16, 16}, {32, 8}, {256, 256}}));
  EXPECT_EQ(pdsp::parse_image_sizes("1x1"), (std::vector<ImageSize>{{1, 1}}));
}

TEST(Denoise, MalformedSizesAreOneLineErrorsNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0x16", "'0x16' has a height or width below 1"},
      {"16x-2", "'16x-2' has a height or width below 1"},
      {"16", "'16' is not HxW"},
      {"16x16x2", "'16x16x2' is not HxW"},
      {"16x", "'16x' is not HxW with integer H and W"},
      {"ax16", "'ax16' is not HxW with integer H and W"},
      {"1.5x16", "'1.5x16' is not HxW with integer H and W"},
      {"16x16,,8x8", "'' is empty"},
      {"16x16,", "'16x16,' is not a comma-separated list"},
      {"40000x40000", "'40000x40000' is too large"},
      {"99999999999999999999x2", "is too large"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = error_of([&] { pdsp::parse_image_sizes(text); });
    EXPECT_EQ(message.rfind("--sizes: ", 0), 0u) << text << " -> " << message;
    EXPECT_NE(message.find(expected), std::string::npos) << text << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << text;
  }
}

TEST(Denoise, PerSiteParametersNeedOneSize) {
  DenoiseOptions options;
  options.sizes = {{16, 16}, {32, 32}};
  options.copies = 2;
  options.params = pdsp::Parameterization::PerSite;
  const std::string message = error_of([&] { pdsp::generate_denoise(options); });
  EXPECT_NE(message.find("--sizes: --params per-site needs a single image size"), std::string::npos)
      << message;
  options.params = pdsp::Parameterization::Shared;
  EXPECT_EQ(error_of([&] { pdsp::check_denoise_options(options); }), "");
}

}  // namespace

// With K bins, state 1's unary row is a one-hot of the observed value's bin (read from the linear
// features of the same seed), the end bins taking values outside [0, 1]; the edges move behind
// the K unary parameters.
TEST(Denoise, UnaryBinsWriteAOneHotOfTheValuesBin) {
  for (const auto params : {pdsp::Parameterization::Shared, pdsp::Parameterization::PerSite}) {
    DenoiseOptions linear;
    linear.height = 5;
    linear.width = 4;
    linear.copies = 6;
    linear.sigma = 0.4;  // values well outside [0, 1] too
    linear.params = params;
    DenoiseOptions binned = linear;
    binned.unary_bins = 4;
    const pdsp::Dataset a = pdsp::generate_denoise(linear);
    const pdsp::Dataset b = pdsp::generate_denoise(binned);
    const bool shared = params == pdsp::Parameterization::Shared;
    const int64_t pixels = 20, edges = 5 * 3 + 4 * 4;
    EXPECT_EQ(b.num_params, shared ? 5 : 4 * pixels + edges);
    EXPECT_EQ(a.label, b.label);
    int low = 0, high = 0;
    for (int64_t v = 0; v < b.num_vars(); ++v) {
      const int64_t state1 = b.state_offset[v] + 1, linear_row = a.state_offset[v] + 1;
      const double x = a.var_features.value[a.var_features.ptr[linear_row]];
      const int bin = x < 0 ? 0 : x >= 1 ? 3 : static_cast<int>(x * 4);
      low += x < 0;
      high += x >= 1;
      ASSERT_EQ(b.var_features.ptr[state1 + 1] - b.var_features.ptr[state1], 1) << v;
      const int64_t pixel = v % pixels;
      EXPECT_EQ(b.var_features.param[b.var_features.ptr[state1]], (shared ? 0 : 4 * pixel) + bin)
          << "variable " << v << ", x = " << x;
      EXPECT_EQ(b.var_features.value[b.var_features.ptr[state1]], 1.0);
    }
    EXPECT_GT(low, 0);
    EXPECT_GT(high, 0);
    // The edges' Ising rows name the parameter after the unary ones.
    EXPECT_EQ(b.factor_features.param.front(), shared ? 4 : 4 * pixels);
  }
  DenoiseOptions negative;
  negative.unary_bins = -1;
  EXPECT_NE(error_of([&] { pdsp::check_denoise_options(negative); }).find("--unary-bins"),
            std::string::npos);
}
