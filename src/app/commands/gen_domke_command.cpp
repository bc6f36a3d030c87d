// pdsp gen domke: Domke's synthetic denoising (gen/domke.hpp), a training and a test file.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/gen/domke.hpp"

namespace pdsp {

int run_gen_domke(const Invocation& invocation, Communicator& comm) {
  std::string train, test;
  DomkeOptions options;
  int train_images = 16, test_images = 16, seed = 1;
  CommandLine command_line(
      invocation.command,
      "Writes Domke's (NIPS 2013) synthetic binary denoising in format 2: labels from blurred\n"
      "uniform noise, one noisy value per pixel and per edge of the 4-connected grid, a\n"
      "constant beside each; a training file and a test file of fresh images.");
  CLI::App& app = command_line.flags();
  const std::string output = "Output", data = "Data";
  app.add_option("--train", train, "training file to write")->required()->group(output);
  app.add_option("--test", test, "test file to write (optional)")->group(output);
  app.add_option("--height", options.height, "image height (the paper: 100)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--width", options.width, "image width (the paper: 100)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--train-images", train_images, "training images (the paper: 16)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--test-images", test_images, "test images (the paper: 16)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--blur", options.blur,
                 "standard deviation of the Gaussian that blurs the noise into labels (the "
                 "paper: 10)")
      ->check(finite_at_least(0))
      ->group(data);
  app.add_option("--seed", seed, "random seed (the test file uses seed + 1)")->group(data);
  if (!command_line.parse_collectively(invocation.args, comm)) return 0;
  run_collectively(comm, [&] {
    options.images = train_images;
    check_domke_options(options);
    check_outputs({{"--train", train}, {"--test", test}}, {});
  });
  const Provenance provenance = describe_run(invocation, command_line.effective_config(), "", comm);
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;  // one writer
    options.seed = static_cast<uint64_t>(seed);
    write_dataset(train, generate_domke(options), provenance);
    std::printf("wrote %s: %d images of %dx%d, %lld parameters\n", train.c_str(), train_images,
                options.height, options.width, static_cast<long long>(kDomkeParams));
    if (test.empty()) return;
    options.images = test_images;
    options.seed = static_cast<uint64_t>(seed) + 1;
    write_dataset(test, generate_domke(options), provenance);
    std::printf("wrote %s: %d images\n", test.c_str(), test_images);
  });
  return 0;
}

}  // namespace pdsp
