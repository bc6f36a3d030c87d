#include <cstdio>
#include <sstream>

#include "pdsp/app/arguments.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/errors.hpp"
#include "pdsp/gen/denoise.hpp"

namespace pdsp {
namespace {

std::vector<int> parse_image_list(const std::string& text) {
  std::vector<int> images;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const int index = parse_int("--images", item);
    if (index < 1 || index > kNumBaseImages)
      throw InputError("--images: " + item + " is not a base image number 1.." +
                       std::to_string(kNumBaseImages));
    images.push_back(index);
  }
  if (images.empty()) throw InputError("--images: give at least one base image");
  return images;
}

}  // namespace

int run_gen(const std::vector<std::string>& args, Communicator& comm) {
  if (args.empty() || args[0] != "denoise") {
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      if (comm.is_root())
        std::puts("usage: pdsp gen denoise [flags]   (see pdsp gen denoise --help)");
      return args.empty() ? 2 : 0;
    }
    run_collectively(comm, [&] {
      throw InputError("pdsp gen: unknown generator '" + args[0] + "' (known: denoise)");
    });
  }
  std::string train = "", test = "", images = "1", noise = "gaussian", params = "per-site";
  std::string sizes = "";
  DenoiseOptions options;
  int train_copies = 40, test_copies = 10, seed = 1;
  Arguments flags(
      "gen denoise",
      "Writes binary image-denoising data on a 4-connected grid: noisy copies of built-in\n"
      "base images, a training file and a test file with fresh noise.");
  flags.add("--train", &train, "training file to write");
  flags.add("--test", &test, "test file to write (optional)");
  flags.add("--height", &options.height, "image height");
  flags.add("--width", &options.width, "image width");
  flags.add("--sizes", &sizes,
            "HxW list, e.g. 16x16,256x256: copy i gets size i mod k (overrides --height/--width)");
  flags.add("--images", &images, "base images, comma-separated from 1..4");
  flags.add("--train-copies", &train_copies, "noisy training copies per base image");
  flags.add("--test-copies", &test_copies, "noisy test copies per base image");
  flags.add("--noise", &noise, "gaussian | bimodal (Hazan & Urtasun's mixture) | flip");
  flags.add("--sigma", &options.sigma, "standard deviation of the Gaussian noise");
  flags.add("--flip", &options.flip, "probability of flipping a pixel (--noise flip)");
  flags.add("--params", &params, "per-site (a weight per pixel and edge) | shared (3 weights)");
  flags.add("--seed", &seed, "random seed (the test file uses seed + 1)");
  flags.required("--train");
  if (!parse_collectively(flags, std::vector<std::string>(args.begin() + 1, args.end()), comm))
    return 0;
  run_collectively(comm, [&] {
    options.images = parse_image_list(images);
    options.noise = parse_noise(noise);
    options.params = parse_parameterization(params);
    if (!sizes.empty()) options.sizes = parse_image_sizes(sizes);
    if (train_copies < 1) throw InputError("--train-copies: must be >= 1");
    if (test_copies < 1) throw InputError("--test-copies: must be >= 1");
    if (!(options.sigma >= 0)) throw InputError("--sigma: must be >= 0");
    if (!(options.flip >= 0 && options.flip <= 1)) throw InputError("--flip: must be in [0, 1]");
    options.copies = train_copies;
    check_denoise_options(options);
    check_outputs({train, test}, {});
    if (!comm.is_root()) return;  // one writer
    options.seed = static_cast<uint64_t>(seed);
    write_dataset(train, generate_denoise(options));
    std::string size_text;
    for (const ImageSize& size : denoise_sizes(options)) {
      if (!size_text.empty()) size_text += ',';
      size_text += std::to_string(size.height);
      size_text += 'x';
      size_text += std::to_string(size.width);
    }
    std::printf("wrote %s: %zu image(s) x %d copies of %s, %lld parameters\n", train.c_str(),
                options.images.size(), train_copies, size_text.c_str(),
                static_cast<long long>(denoise_num_params(options)));
    if (test.empty()) return;
    options.copies = test_copies;
    options.seed = static_cast<uint64_t>(seed) + 1;
    write_dataset(test, generate_denoise(options));
    std::printf("wrote %s: %zu image(s) x %d copies\n", test.c_str(), options.images.size(),
                test_copies);
  });
  return 0;
}

}  // namespace pdsp
