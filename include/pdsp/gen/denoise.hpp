#pragma once
// Binary image denoising on a 4-connected grid (Kumar & Hebert 2003 style, as used in Hazan &
// Urtasun 2010 section 5): built-in base images, noisy copies, and two parameterisations.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

// Gaussian: y + N(0, sigma); Bimodal: Hazan & Urtasun's per-class Gaussian mixtures; Flip: the
// observed pixel is the label with each bit flipped with probability `flip` (their 10x10 and
// 5x5 experiments).
enum class Noise { Gaussian, Bimodal, Flip };
enum class Parameterization { Shared, PerSite };

struct ImageSize {
  int height = 0;
  int width = 0;
  bool operator==(const ImageSize&) const = default;
};

struct DenoiseOptions {
  int height = 64;
  int width = 64;
  // When not empty, replaces height and width: copy i of every base image is rendered at
  // sizes[i % sizes.size()]. Per-site parameters need a single size.
  std::vector<ImageSize> sizes;
  std::vector<int> images{1};  // base images, 1..kNumBaseImages
  int copies = 40;             // noisy copies per base image
  Noise noise = Noise::Gaussian;
  double sigma = 0.3;  // Gaussian noise only
  double flip = 0.2;   // Flip noise only
  Parameterization params = Parameterization::PerSite;
  // 0: state 1's unary is linear in the observed value x (a weight and a bias); K > 0: a
  // one-hot of x's bin among K equal bins of [0, 1] (values outside go to the end bins), which
  // a classifier needs where a class's values lie on both sides of the other's (bimodal noise).
  int unary_bins = 0;
  uint64_t seed = 1;
};

inline constexpr int kNumBaseImages = 4;
inline constexpr int kMaxUnaryBins = 1000;
// The largest image, in pixels: training one would need far more memory than any node has
// (about 450 bytes per pixel), so a mistyped size fails at once instead of exhausting memory.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 30;

// Ground truth labels (0/1) of base image `index` at the given size, row-major.
std::vector<int32_t> base_image(int index, int height, int width);

// Parameters: shared = [unary weight, unary bias, edge weight]; per-site = a weight and a bias
// per pixel (2 * H * W), then one weight per edge, edges in pixel order (each pixel's right
// edge, then its down edge). With unary_bins = K > 0 the unary weight and bias are replaced by K
// bin weights (shared: K + 1 parameters; per-site: K * H * W + edges).
int64_t denoise_num_params(const DenoiseOptions& options);

// The image sizes the copies cycle through: options.sizes, or {height x width} when it is empty.
std::vector<ImageSize> denoise_sizes(const DenoiseOptions& options);

// Throws an InputError naming the flag (--height/--width, --sizes, --params, --unary-bins) when
// the options cannot be generated: a size below 1 or above kMaxImagePixels, per-site parameters
// with more than one size or too many of them, a negative number of bins. generate_denoise calls
// it.
void check_denoise_options(const DenoiseOptions& options);

Dataset generate_denoise(const DenoiseOptions& options);

Noise parse_noise(const std::string& text);
Parameterization parse_parameterization(const std::string& text);
// "16x16,32x32,256x256" -> sizes; a malformed, zero, negative or too large size is an
// InputError naming --sizes and the item.
std::vector<ImageSize> parse_image_sizes(const std::string& text);

}  // namespace pdsp
