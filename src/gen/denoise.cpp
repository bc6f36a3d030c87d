#include "pdsp/gen/denoise.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <sstream>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Observed value of a pixel with true label y.
double noisy_value(int32_t y, const DenoiseOptions& options, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  if (options.noise == Noise::Gaussian) return y + options.sigma * normal(rng);
  if (options.noise == Noise::Flip)
    return std::bernoulli_distribution(options.flip)(rng) ? 1 - y : y;
  // Bimodal: per class an equal mixture of two Gaussians (mean, sd), the parameters of Hazan &
  // Urtasun section 5.
  static constexpr double kMixture[2][2][2] = {{{0.08, 0.03}, {0.46, 0.03}},
                                               {{0.55, 0.02}, {0.42, 0.10}}};
  const int component = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
  const double* mode = kMixture[y][component];
  return mode[0] + mode[1] * normal(rng);
}

// The Ising pattern [1, -1; -1, 1] on the weight of one edge.
std::vector<FeatureRow> ising_rows(int32_t param) {
  return {{{param, 1.0}}, {{param, -1.0}}, {{param, -1.0}}, {{param, 1.0}}};
}

// Unary parameters of one pixel (shared: of all pixels).
int64_t unary_params(const DenoiseOptions& o) {
  return o.unary_bins > 0 ? o.unary_bins : 2;
}

// State 1's feature row of an observed value x, its unary parameters starting at `first`.
FeatureRow unary_row(double x, int32_t first, const DenoiseOptions& o) {
  if (o.unary_bins == 0) return {{first, x}, {first + 1, 1.0}};
  const double scaled = std::floor(x * o.unary_bins);
  const auto bin = static_cast<int32_t>(std::clamp(scaled, 0.0, double(o.unary_bins - 1)));
  return {{first + bin, 1.0}};
}

}  // namespace

int64_t denoise_num_params(const DenoiseOptions& o) {
  if (o.params == Parameterization::Shared) return unary_params(o) + 1;
  // Per-site parameters are defined for one size only (check_denoise_options).
  const ImageSize size = denoise_sizes(o).front();
  const int64_t pixels = int64_t{size.height} * size.width;
  const int64_t edges =
      int64_t{size.height} * (size.width - 1) + int64_t{size.height - 1} * size.width;
  return unary_params(o) * pixels + edges;
}

std::vector<ImageSize> denoise_sizes(const DenoiseOptions& o) {
  if (!o.sizes.empty()) return o.sizes;
  return {{o.height, o.width}};
}

void check_denoise_options(const DenoiseOptions& o) {
  const char* flag = o.sizes.empty() ? "--height/--width" : "--sizes";
  for (const ImageSize& size : denoise_sizes(o)) {
    if (size.height < 1 || size.width < 1) throw InputError(std::string(flag) + ": must be >= 1");
    if (int64_t{size.height} * size.width > kMaxImagePixels)
      throw InputError(std::string(flag) + ": more than 2^30 pixels in one image");
  }
  if (o.copies < 0) throw InputError("copies: must be >= 0");
  if (o.unary_bins < 0 || o.unary_bins > kMaxUnaryBins)
    throw InputError("--unary-bins: must be in [0, " + std::to_string(kMaxUnaryBins) + "]");
  // The file is built in memory with 32-bit indices (LocalIndex): its factor table entries, four
  // per edge and the largest of its arrays, must stay below 2^31.
  const std::vector<ImageSize> sizes = denoise_sizes(o);
  int64_t entries = 0;
  for (int64_t copy = 0; copy < o.copies && entries <= INT32_MAX; ++copy) {
    const ImageSize& size = sizes[static_cast<size_t>(copy) % sizes.size()];
    entries += 4 * static_cast<int64_t>(o.images.size()) *
               (int64_t{size.height} * (size.width - 1) + int64_t{size.height - 1} * size.width);
  }
  if (entries > INT32_MAX)
    throw InputError("--train-copies/--test-copies: one file would hold at least " +
                     std::to_string(entries) +
                     " factor table entries, more than the 2^31 - 1 pdsp gen writes at once; "
                     "generate fewer copies (about 260 million pixels per file)");
  if (o.params != Parameterization::PerSite) return;
  if (o.sizes.size() > 1)
    throw InputError("--sizes: --params per-site needs a single image size (got " +
                     std::to_string(o.sizes.size()) + "); use --params shared");
  const ImageSize size = denoise_sizes(o).front();
  if ((unary_params(o) + 2) * int64_t{size.height} * size.width > INT32_MAX)
    throw InputError(std::string(flag) + ": too many per-site parameters");
}

Dataset generate_denoise(const DenoiseOptions& o) {
  check_denoise_options(o);
  const bool shared = o.params == Parameterization::Shared;
  const auto unary = static_cast<int32_t>(unary_params(o));
  const std::vector<ImageSize> sizes = denoise_sizes(o);
  DatasetBuilder builder(denoise_num_params(o));
  std::mt19937_64 rng(o.seed);
  for (int image : o.images) {
    std::vector<std::vector<int32_t>> truths;  // the base image at each size
    for (const ImageSize& size : sizes)
      truths.push_back(base_image(image, size.height, size.width));
    for (int copy = 0; copy < o.copies; ++copy) {
      const size_t which = static_cast<size_t>(copy) % sizes.size();
      const int64_t height = sizes[which].height, width = sizes[which].width;
      const int64_t pixels = height * width;
      const std::vector<int32_t>& truth = truths[which];
      const auto edge_param = [&](int64_t edge) {
        return static_cast<int32_t>(shared ? unary : unary * pixels + edge);
      };
      builder.begin_example();
      int64_t first = 0;
      for (int64_t i = 0; i < pixels; ++i) {
        const double x = noisy_value(truth[i], o, rng);
        const int32_t first_param = shared ? 0 : static_cast<int32_t>(unary * i);
        // State 0 has no features: only differences between states matter to the model.
        const int64_t v = builder.add_variable(2, truth[i], {{}, unary_row(x, first_param, o)});
        if (i == 0) first = v;
      }
      int64_t edge = 0;
      for (int64_t r = 0; r < height; ++r)
        for (int64_t c = 0; c < width; ++c) {
          const int64_t v = first + r * width + c;
          if (c + 1 < width) builder.add_factor({v, v + 1}, ising_rows(edge_param(edge++)));
          if (r + 1 < height) builder.add_factor({v, v + width}, ising_rows(edge_param(edge++)));
        }
    }
  }
  return builder.finish();
}

Noise parse_noise(const std::string& text) {
  if (text == "gaussian") return Noise::Gaussian;
  if (text == "bimodal") return Noise::Bimodal;
  if (text == "flip") return Noise::Flip;
  throw InputError("--noise: '" + text + "' is not one of gaussian, bimodal, flip");
}

Parameterization parse_parameterization(const std::string& text) {
  if (text == "shared") return Parameterization::Shared;
  if (text == "per-site") return Parameterization::PerSite;
  throw InputError("--params: '" + text + "' is not one of shared, per-site");
}

std::vector<ImageSize> parse_image_sizes(const std::string& text) {
  const auto fail = [](const std::string& item, const std::string& why) {
    throw InputError("--sizes: '" + item + "' " + why);
  };
  // One side of HxW: an optional minus sign and digits; false when it is not an integer.
  const auto parse_side = [](const std::string& side, int64_t& value, bool& overflow) {
    overflow = false;
    if (side.empty() || side == "-") return false;
    const char* end = side.data() + side.size();
    const auto [ptr, error] = std::from_chars(side.data(), end, value);
    if (error == std::errc::result_out_of_range) {
      overflow = side[0] != '-';
      value = overflow ? INT64_MAX : 0;
      return side.find_first_not_of("-0123456789") == std::string::npos;
    }
    return error == std::errc() && ptr == end;
  };
  std::vector<ImageSize> sizes;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const size_t x = item.find('x');
    if (item.empty()) fail(item, "is empty: give comma-separated HxW sizes, e.g. 16x16,256x256");
    if (x == std::string::npos || item.find('x', x + 1) != std::string::npos)
      fail(item, "is not HxW (e.g. 16x16)");
    int64_t height = 0, width = 0;
    bool height_overflow = false, width_overflow = false;
    if (!parse_side(item.substr(0, x), height, height_overflow) ||
        !parse_side(item.substr(x + 1), width, width_overflow))
      fail(item, "is not HxW with integer H and W (e.g. 16x16)");
    if (height < 1 || width < 1) fail(item, "has a height or width below 1");
    if (height_overflow || width_overflow || height > kMaxImagePixels || width > kMaxImagePixels ||
        height * width > kMaxImagePixels)
      fail(item, "is too large (at most 2^30 pixels per image)");
    sizes.push_back({static_cast<int>(height), static_cast<int>(width)});
  }
  if (sizes.empty() || text.back() == ',')
    throw InputError("--sizes: '" + text + "' is not a comma-separated list of HxW sizes");
  return sizes;
}

}  // namespace pdsp
