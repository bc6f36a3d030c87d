#pragma once
// The synthetic binary denoising of Domke (NIPS 2013, section 8), in format 2: each image's
// labels are uniform noise blurred by a Gaussian and rounded; each pixel observes one value
// drawn from [0, 0.9] where its label is 0 and from [0.1, 1] where it is 1, and each edge of the
// 4-connected grid one value from [0, 0.8] where its labels agree and from [0.2, 1] where they
// differ, a constant 1 beside each. One variable type and one factor type read these rows (dim
// 2): the linear model is Domke's linear classes, f(x, y) = (W x)_y.
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

struct DomkeOptions {
  int height = 100;
  int width = 100;
  int images = 16;
  double blur = 10.0;  // the Gaussian's standard deviation, in pixels
  uint64_t seed = 1;
};

// Parameters: the variable type's block (2 states x 2 observation entries), then the factor
// type's (4 joint states x 2).
inline constexpr int64_t kDomkeParams = 12;

// Throws an InputError naming the flag when the options cannot be generated (a size or count
// below 1, an image above kMaxImagePixels, a blur that is negative or not finite).
void check_domke_options(const DomkeOptions& options);

// The labels of one image: `height` x `width` values uniform in [0, 1), blurred by a Gaussian of
// standard deviation `blur` and rounded to 0 or 1, row-major. The Gaussian is cut at 4
// standard deviations; near the border its weights are renormalised over the pixels inside
// the image, so that every blurred value is an average of uniform values (the paper does not
// say how it treats the border).
std::vector<int32_t> blurred_noise_labels(int height, int width, double blur, uint64_t seed);

// `values` (height x width, row-major) convolved with the Gaussian above, border renormalised.
std::vector<double> gaussian_blur(const std::vector<double>& values, int height, int width,
                                  double blur);

Dataset generate_domke(const DomkeOptions& options);

}  // namespace pdsp
