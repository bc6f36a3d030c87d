#include "pdsp/gen/domke.hpp"

#include <cmath>
#include <random>
#include <string>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/gen/denoise.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// The Gaussian's weights at offsets 0..radius (its other half is the same), cut at 4 standard
// deviations.
std::vector<double> half_kernel(double blur) {
  const int radius = static_cast<int>(std::ceil(4.0 * blur));
  std::vector<double> kernel(static_cast<size_t>(radius) + 1);
  for (int k = 0; k <= radius; ++k)
    kernel[static_cast<size_t>(k)] = blur > 0 ? std::exp(-0.5 * k * k / (blur * blur)) : 1.0;
  return kernel;
}

// One pass of the separable blur along a line of `count` values `stride` apart.
void blur_line(const double* in, double* out, int64_t count, int64_t stride,
               const std::vector<double>& kernel) {
  const auto radius = static_cast<int64_t>(kernel.size()) - 1;
  for (int64_t i = 0; i < count; ++i) {
    double sum = 0.0, weight = 0.0;
    for (int64_t j = std::max<int64_t>(0, i - radius); j <= std::min(count - 1, i + radius); ++j) {
      const double w = kernel[static_cast<size_t>(std::abs(j - i))];
      sum += w * in[j * stride];
      weight += w;
    }
    out[i * stride] = sum / weight;
  }
}

// The observation row [value, 1] of a region, appended to `obs`; returns its local row.
LocalIndex add_observation(ObservationRows& obs, double value) {
  obs.index.push_back(0);
  obs.value.push_back(value);
  obs.index.push_back(1);
  obs.value.push_back(1.0);
  obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
  return static_cast<LocalIndex>(obs.num_rows() - 1);
}

}  // namespace

void check_domke_options(const DomkeOptions& o) {
  if (o.height < 1 || o.width < 1 || int64_t{o.height} * o.width > kMaxImagePixels)
    throw InputError("--height/--width: " + std::to_string(o.height) + "x" +
                     std::to_string(o.width) + " is not an image of 1 to 2^30 pixels");
  if (o.images < 1) throw InputError("--train-images/--test-images: give at least one image");
  if (!std::isfinite(o.blur) || o.blur < 0)
    throw InputError("--blur: the standard deviation must be finite and at least 0");
}

std::vector<double> gaussian_blur(const std::vector<double>& values, int height, int width,
                                  double blur) {
  const std::vector<double> kernel = half_kernel(blur);
  std::vector<double> rows(values.size()), out(values.size());
  for (int64_t r = 0; r < height; ++r)
    blur_line(values.data() + r * width, rows.data() + r * width, width, 1, kernel);
  for (int64_t c = 0; c < width; ++c)
    blur_line(rows.data() + c, out.data() + c, height, width, kernel);
  return out;
}

std::vector<int32_t> blurred_noise_labels(int height, int width, double blur, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> noise(static_cast<size_t>(int64_t{height} * width));
  for (double& x : noise) x = uniform(rng);
  const std::vector<double> blurred = gaussian_blur(noise, height, width, blur);
  std::vector<int32_t> labels(blurred.size());
  for (size_t i = 0; i < blurred.size(); ++i) labels[i] = blurred[i] >= 0.5 ? 1 : 0;
  return labels;
}

Dataset generate_domke(const DomkeOptions& o) {
  check_domke_options(o);
  DatasetBuilder builder(kDomkeParams);
  std::mt19937_64 rng(o.seed);
  const auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(rng);
  };
  std::vector<int64_t> obs_offset = {0};
  ObservationRows obs;
  std::vector<LocalIndex> var_row, factor_row;
  const int64_t pixels = int64_t{o.height} * o.width;
  for (int image = 0; image < o.images; ++image) {
    const std::vector<int32_t> y = blurred_noise_labels(o.height, o.width, o.blur, rng());
    builder.begin_example();
    int64_t first = 0;
    for (int64_t i = 0; i < pixels; ++i) {
      const int64_t v = builder.add_variable(2, y[i]);
      if (i == 0) first = v;
      var_row.push_back(add_observation(obs, y[i] == 0 ? uniform(0.0, 0.9) : uniform(0.1, 1.0)));
    }
    const auto add_edge = [&](int64_t i, int64_t j) {
      builder.add_factor({first + i, first + j});
      factor_row.push_back(
          add_observation(obs, y[i] == y[j] ? uniform(0.0, 0.8) : uniform(0.2, 1.0)));
    };
    for (int64_t r = 0; r < o.height; ++r)
      for (int64_t c = 0; c < o.width; ++c) {
        const int64_t i = r * o.width + c;
        if (c + 1 < o.width) add_edge(i, i + 1);
        if (r + 1 < o.height) add_edge(i, i + o.width);
      }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = std::move(obs_offset);
  data.observations = std::move(obs);
  data.var_types.present = true;
  data.var_types.param_offset = {0};
  data.var_types.dim = {2};
  data.var_types.type.assign(var_row.size(), 0);
  data.var_types.obs_row = std::move(var_row);
  data.factor_types.present = true;
  data.factor_types.param_offset = {4};
  data.factor_types.dim = {2};
  data.factor_types.type.assign(factor_row.size(), 0);
  data.factor_types.obs_row = std::move(factor_row);
  return data;
}

}  // namespace pdsp
