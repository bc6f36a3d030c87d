// Times each phase of one outer iteration on the denoising problem, in memory (no MPI), for the
// general and the specialised kernels (messages in double and in single precision): a sweep, the
// beliefs, the moments, the potentials of a trial and the objective of a trial. Run by
// run/bench_kernels.sh, which puts the times next to the machine limits of run/limit_probe.sh.
// With a data file in place of SIZE (such as yeast's converted training set) the same phases run on
// that file's examples.
//   pdsp_kernel_bench [SIZE | FILE.h5] [IMAGES] [REPEATS] [all|specialised]
#include <omp.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "pdsp/data/dataset_io.hpp"
#include "pdsp/gen/denoise.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/util/clock.hpp"

namespace {

double best_seconds(int repeats, const std::function<void()>& work) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = pdsp::Clock::now();
    work();
    best = std::min(best, pdsp::seconds_since(start));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "64";
  const bool from_file = first.ends_with(".h5");
  pdsp::DenoiseOptions options;
  options.height = options.width = from_file ? 0 : std::stoi(first);
  options.copies = argc > 2 ? std::stoi(argv[2]) : 40;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 20;
  const bool only_specialised = argc > 4 && std::string(argv[4]) == "specialised";
  const pdsp::Dataset data =
      from_file ? pdsp::read_dataset(first) : pdsp::generate_denoise(options);
  std::vector<double> theta(static_cast<size_t>(data.num_params), 0.1);
  std::vector<double> z(theta.size());

  const std::string what = from_file ? first
                                     : std::to_string(options.height) + "x" +
                                           std::to_string(options.width) + " x " +
                                           std::to_string(options.copies) + " images";
  std::printf("# %s, %lld variables, %lld factors, %d thread(s); best of %d (ms)\n", what.c_str(),
              static_cast<long long>(data.num_vars()), static_cast<long long>(data.num_factors()),
              omp_get_max_threads(), repeats);
  std::printf("%-16s %10s %10s %10s %10s %10s\n", "kernels", "sweep", "beliefs", "moments",
              "potentials", "objective");
  struct Row {
    const char* name;
    bool specialised;
    pdsp::MessagePrecision precision;
  };
  const Row rows[] = {{"general", false, pdsp::MessagePrecision::Double},
                      {"binary-pairwise", true, pdsp::MessagePrecision::Double},
                      {"binary, float32", true, pdsp::MessagePrecision::Single}};
  for (const Row& row : rows) {
    if (only_specialised && !row.specialised) continue;
    pdsp::ProblemSettings settings;
    settings.source = "generated";
    settings.specialised_kernels = row.specialised;
    settings.message_precision = row.precision;
    pdsp::LocalProblem problem(data, settings);
    problem.set_theta(theta);
    problem.sweep(3);  // messages away from zero, as in training
    const double ms[] = {
        1e3 * best_seconds(repeats, [&] { problem.sweep(1); }),
        1e3 * best_seconds(repeats, [&] { problem.evaluate(); }),
        1e3 * best_seconds(repeats, [&] { problem.model_moments(z); }),
        1e3 * best_seconds(repeats, [&] { problem.set_theta(theta); }),
        1e3 * best_seconds(repeats, [&] { problem.objective(); }),
    };
    std::printf("%-16s %10.3f %10.3f %10.3f %10.3f %10.3f\n", row.name, ms[0], ms[1], ms[2], ms[3],
                ms[4]);
  }
  return 0;
}
