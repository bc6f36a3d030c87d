// Times each phase of one outer iteration on the denoising problem, in memory (no files, no
// MPI), for the general and the specialised kernels (messages in double and in single
// precision): a sweep, the beliefs, the moments, the potentials of a trial and the objective of a
// trial; or, given a data file, on that data set with the kernels training would pick (Taskar
// OCR's chains: the shared tables). Run by run/bench_kernels.sh, which puts the times next to the
// machine limits of run/limit_probe.sh.
//   pdsp_kernel_bench [SIZE] [IMAGES] [REPEATS] [all|specialised]
//   pdsp_kernel_bench --data FILE [REPEATS] [EPSILON]
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

void print_header() {
  std::printf("%-16s %10s %10s %10s %10s %10s\n", "kernels", "sweep", "beliefs", "moments",
              "potentials", "objective");
}

// The phases on `data` at theta = 0.1 everywhere, after three sweeps (messages away from zero, as
// in training), as one row of the table, named `name` or, when that is empty, by the kernels
// that run.
void time_phases(const pdsp::Dataset& data, const pdsp::ProblemSettings& settings, int repeats,
                 std::string name) {
  std::vector<double> theta(static_cast<size_t>(data.num_params), 0.1);
  std::vector<double> z(theta.size());
  pdsp::LocalProblem problem(data, settings);
  if (name.empty()) name = problem.kernel_name().substr(0, problem.kernel_name().find(','));
  problem.set_theta(theta);
  problem.sweep(3);
  const double ms[] = {
      1e3 * best_seconds(repeats, [&] { problem.sweep(1); }),
      1e3 * best_seconds(repeats, [&] { problem.evaluate(); }),
      1e3 * best_seconds(repeats, [&] { problem.model_moments(z); }),
      1e3 * best_seconds(repeats, [&] { problem.set_theta(theta); }),
      1e3 * best_seconds(repeats, [&] { problem.objective(); }),
  };
  std::printf("%-16s %10.3f %10.3f %10.3f %10.3f %10.3f\n", name.c_str(), ms[0], ms[1], ms[2],
              ms[3], ms[4]);
}

int bench_file(int argc, char** argv) {
  const std::string path = argv[2];
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 20;
  pdsp::ProblemSettings settings;
  settings.source = path;
  settings.epsilon = argc > 4 ? std::stod(argv[4]) : 1.0;
  const pdsp::Dataset data = pdsp::read_dataset(path);
  std::printf("# %s: %lld examples, %lld variables, %lld factors, %d thread(s); best of %d (ms)\n",
              path.c_str(), static_cast<long long>(data.num_examples()),
              static_cast<long long>(data.num_vars()), static_cast<long long>(data.num_factors()),
              omp_get_max_threads(), repeats);
  print_header();
  time_phases(data, settings, repeats, "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--data") return bench_file(argc, argv);
  pdsp::DenoiseOptions options;
  options.height = options.width = argc > 1 ? std::stoi(argv[1]) : 64;
  options.copies = argc > 2 ? std::stoi(argv[2]) : 40;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 20;
  const bool only_specialised = argc > 4 && std::string(argv[4]) == "specialised";
  const pdsp::Dataset data = pdsp::generate_denoise(options);

  std::printf("# %dx%d x %d images, %lld variables, %lld factors, %d thread(s); best of %d (ms)\n",
              options.height, options.width, options.copies,
              static_cast<long long>(data.num_vars()), static_cast<long long>(data.num_factors()),
              omp_get_max_threads(), repeats);
  print_header();
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
    time_phases(data, settings, repeats, row.name);
  }
  return 0;
}
