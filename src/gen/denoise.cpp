#include "pdsp/gen/denoise.hpp"

#include <random>

#include "pdsp/data/dataset_builder.hpp"
#include "pdsp/data/errors.hpp"

namespace pdsp {
namespace {

// Observed value of a pixel with true label y.
double noisy_value(int32_t y, const DenoiseOptions& options, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  if (options.noise == Noise::Gaussian) return y + options.sigma * normal(rng);
  if (options.noise == Noise::Flip) return std::bernoulli_distribution(options.flip)(rng) ? 1 - y : y;
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

}  // namespace

int64_t denoise_num_params(const DenoiseOptions& o) {
  if (o.params == Parameterization::Shared) return 3;
  const int64_t pixels = int64_t{o.height} * o.width;
  const int64_t edges = int64_t{o.height} * (o.width - 1) + int64_t{o.height - 1} * o.width;
  return 2 * pixels + edges;
}

Dataset generate_denoise(const DenoiseOptions& o) {
  if (o.height < 1 || o.width < 1) throw InputError("--height/--width: must be >= 1");
  if (o.copies < 0) throw InputError("copies: must be >= 0");
  const bool shared = o.params == Parameterization::Shared;
  const int64_t pixels = int64_t{o.height} * o.width;
  if (!shared && 2 * pixels + 2 * pixels > INT32_MAX)
    throw InputError("--height/--width: too many per-site parameters");
  DatasetBuilder builder(denoise_num_params(o));
  std::mt19937_64 rng(o.seed);
  const auto edge_param = [&](int64_t edge) {
    return static_cast<int32_t>(shared ? 2 : 2 * pixels + edge);
  };
  for (int image : o.images) {
    const std::vector<int32_t> truth = base_image(image, o.height, o.width);
    for (int copy = 0; copy < o.copies; ++copy) {
      builder.begin_example();
      int64_t first = 0;
      for (int64_t i = 0; i < pixels; ++i) {
        const double x = noisy_value(truth[i], o, rng);
        const int32_t weight = shared ? 0 : static_cast<int32_t>(2 * i);
        // State 0 has no features: only differences between states matter to the model.
        const int64_t v = builder.add_variable(2, truth[i], {{}, {{weight, x}, {weight + 1, 1.0}}});
        if (i == 0) first = v;
      }
      int64_t edge = 0;
      for (int64_t r = 0; r < o.height; ++r)
        for (int64_t c = 0; c < o.width; ++c) {
          const int64_t v = first + r * o.width + c;
          if (c + 1 < o.width) builder.add_factor({v, v + 1}, ising_rows(edge_param(edge++)));
          if (r + 1 < o.height)
            builder.add_factor({v, v + o.width}, ising_rows(edge_param(edge++)));
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

}  // namespace pdsp
