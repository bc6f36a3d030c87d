#include <algorithm>
#include <cstdio>

#include "pdsp/app/arguments.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/inference/counting.hpp"

namespace pdsp {

int run_info(const std::vector<std::string>& args, Communicator& comm) {
  std::string path;
  Arguments flags("info", "Validates a pdsp data set and prints a summary.\nusage: pdsp info FILE");
  flags.add("--data", &path, "data set to inspect (or give it as the only argument)");
  std::vector<std::string> rest = args;
  if (rest.size() == 1 && rest[0].rfind("--", 0) != 0) rest = {"--data", rest[0]};
  flags.required("--data");
  if (!parse_collectively(flags, rest, comm)) return 0;

  // Every rank reads and validates its slice: `info` checks exactly what training would read.
  DatasetLayout layout;
  const Dataset slice = load_rank_slice(path, comm, &layout);
  // The counting numbers of the file must allow the message update, as training will check.
  run_collectively(comm, [&] {
    if (slice.has_counting())
      make_counting_numbers(slice, FactorGraph(slice), CountingMode::File, path);
  });
  double sums[2] = {static_cast<double>(slice.var_features.nnz()),
                    static_cast<double>(slice.factor_features.nnz())};
  double maxima[2] = {0, 0};  // largest cardinality and arity
  for (int32_t c : slice.card) maxima[0] = std::max(maxima[0], static_cast<double>(c));
  for (int64_t a = 0; a < slice.num_factors(); ++a)
    maxima[1] = std::max(maxima[1], static_cast<double>(slice.arity(a)));
  comm.allreduce(sums, maxima);
  if (!comm.is_root()) return 0;

  std::printf("%s: valid pdsp-dataset (format_version 1)\n", path.c_str());
  std::printf("  examples            %lld\n", static_cast<long long>(layout.num_examples()));
  std::printf("  variables           %lld (max cardinality %g)\n",
              static_cast<long long>(layout.num_vars()), maxima[0]);
  std::printf("  factors             %lld (max arity %g)\n",
              static_cast<long long>(layout.num_factors()), maxima[1]);
  std::printf("  states              %lld\n", static_cast<long long>(layout.state_offset.back()));
  std::printf("  factor table entries %lld\n", static_cast<long long>(layout.table_offset.back()));
  std::printf("  parameters          %lld\n", static_cast<long long>(layout.num_params));
  std::printf("  feature nnz         %.0f (variables) + %.0f (factors)\n", sums[0], sums[1]);
  std::printf("  labels              %s\n",
              layout.has_labels ? "yes" : "no (pdsp train needs them; pdsp predict does not)");
  std::printf("  counting numbers    %s\n",
              layout.has_var_counting && layout.has_factor_counting ? "yes" : "no");
  std::printf("  loss table          %s\n", layout.has_loss ? "yes" : "no");
  std::printf("  variables per example (histogram, power-of-two buckets):\n");
  std::vector<int64_t> histogram(64, 0);
  for (int64_t n = 0; n < layout.num_examples(); ++n) {
    const int64_t size = layout.var_offset[n + 1] - layout.var_offset[n];
    int bucket = 0;
    while ((int64_t{2} << bucket) <= size) ++bucket;
    ++histogram[bucket];
  }
  for (int b = 0; b < 64; ++b)
    if (histogram[b] > 0)
      std::printf("    [%lld, %lld)  %lld\n", static_cast<long long>(int64_t{1} << b),
                  static_cast<long long>(int64_t{2} << b), static_cast<long long>(histogram[b]));
  return 0;
}

}  // namespace pdsp
