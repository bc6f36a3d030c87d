#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>

#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/gen/denoise.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

struct GenFlags {
  std::string train, test, images = "1", noise = "gaussian", params = "per-site", sizes;
  DenoiseOptions options;
  int train_copies = 40, test_copies = 10, seed = 1;
  bool quiet = false;
};

void declare_flags(CLI::App& app, GenFlags& f) {
  const std::string data = "Data";
  add_generator_outputs(app, f.train, f.test, f.quiet, "Output");
  app.add_option("--height", f.options.height, "image height")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--width", f.options.width, "image width")->check(whole_at_least(1))->group(data);
  app.add_option("--sizes", f.sizes,
                 "HxW list, e.g. 16x16,256x256: copy i gets size i mod k (overrides "
                 "--height/--width)")
      ->group(data);
  app.add_option("--images", f.images, "base images, comma-separated from 1..4")->group(data);
  app.add_option("--train-copies", f.train_copies, "noisy training copies per base image")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--test-copies", f.test_copies, "noisy test copies per base image")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--noise", f.noise, "Hazan & Urtasun's bimodal mixture, Gaussian or flips")
      ->check(CLI::IsMember({"gaussian", "bimodal", "flip"}))
      ->group(data);
  app.add_option("--sigma", f.options.sigma, "standard deviation of the Gaussian noise")
      ->check(finite_at_least(0))
      ->group(data);
  app.add_option("--flip", f.options.flip, "probability of flipping a pixel (--noise flip)")
      ->check(finite_in(0, 1))
      ->group(data);
  app.add_option("--params", f.params,
                 "per-site (a weight per pixel and edge) | shared (one set for all: 3 weights, or "
                 "--unary-bins + 1)")
      ->check(CLI::IsMember({"per-site", "shared"}))
      ->group(data);
  app.add_option("--unary-bins", f.options.unary_bins,
                 "0: a pixel's unary is linear in its value (weight, bias); K: a weight for each "
                 "of K bins of the value in [0, 1]")
      ->check(CLI::Range(0, kMaxUnaryBins))
      ->group(data);
  app.add_option("--seed", f.seed, "random seed (the test file uses seed + 1)")->group(data);
}

std::vector<int> parse_image_list(const std::string& text) {
  std::vector<int> images;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    int index = 0;
    if (!CLI::detail::lexical_cast(item, index) || index < 1 || index > kNumBaseImages)
      throw InputError("--images: '" + item + "' is not a base image number 1.." +
                       std::to_string(kNumBaseImages));
    images.push_back(index);
  }
  if (images.empty()) throw InputError("--images: give at least one base image");
  return images;
}

std::string sizes_text(const DenoiseOptions& options) {
  std::string text;
  for (const ImageSize& size : denoise_sizes(options))
    text +=
        (text.empty() ? "" : ",") + std::to_string(size.height) + "x" + std::to_string(size.width);
  return text;
}

}  // namespace

int run_gen_denoise(const Invocation& invocation, Communicator& comm) {
  GenFlags f;
  CommandLine command_line(
      invocation.command,
      "Writes binary image-denoising data on a 4-connected grid: noisy copies of built-in\n"
      "base images, a training file and a test file with fresh noise.");
  declare_flags(command_line.flags(), f);
  if (!command_line.parse_collectively(invocation.args, comm)) return 0;
  DenoiseOptions& options = f.options;
  run_collectively(comm, [&] {
    options.images = parse_image_list(f.images);
    options.noise = parse_noise(f.noise);
    options.params = parse_parameterization(f.params);
    if (!f.sizes.empty()) options.sizes = parse_image_sizes(f.sizes);
    options.copies = f.train_copies;
    check_denoise_options(options);
    check_outputs({{"--train", f.train}, {"--test", f.test}}, {});
  });
  const Provenance provenance = describe_run(invocation, command_line.effective_config(), "", comm);
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;  // one writer
    Progress progress(!f.quiet, "pdsp gen denoise");
    options.seed = static_cast<uint64_t>(f.seed);
    Dataset train = generate_denoise(options);
    progress.update("writing " + f.train);
    write_dataset(f.train, train, provenance);
    std::printf("wrote %s: %zu image(s) x %d copies of %s, %lld parameters\n", f.train.c_str(),
                options.images.size(), f.train_copies, sizes_text(options).c_str(),
                static_cast<long long>(denoise_num_params(options)));
    if (f.test.empty()) return;
    options.copies = f.test_copies;
    options.seed = static_cast<uint64_t>(f.seed) + 1;
    progress.update("generating " + f.test);
    Dataset test = generate_denoise(options);
    progress.update("writing " + f.test);
    write_dataset(f.test, test, provenance);
    std::printf("wrote %s: %zu image(s) x %d copies\n", f.test.c_str(), options.images.size(),
                f.test_copies);
  });
  return 0;
}

}  // namespace pdsp
