#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/model_checks.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/data/provenance.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/shard_partition.hpp"
#include "pdsp/inference/slice_loading.hpp"

namespace pdsp {
namespace {

// The provenance lines of `pdsp info`.
void print_provenance(const Provenance& provenance, const std::string& path) {
  if (provenance.version.empty()) {
    std::printf("  no provenance recorded (written by another tool, or by a pdsp before 0.1.0)\n");
    return;
  }
  for (const auto& [name, value] : provenance.fields())
    if (name != "effective_config")
      std::printf("  %-20s %s\n", name.c_str(), field_text(value).c_str());
  std::printf("  effective settings (pdsp info %s --write-config FILE writes them):\n",
              path.c_str());
  std::istringstream lines(provenance.config);
  for (std::string line; std::getline(lines, line);) std::printf("    %s\n", line.c_str());
}

// How one region kind's features are encoded: its feature rows and its typed part (format 2).
std::string encoding_text(bool has_rows, double row_nnz, const RegionTypes& types,
                          double typed_regions, double regions, const char* kind) {
  std::string text = has_rows
                         ? "rows (" + std::to_string(static_cast<int64_t>(row_nnz)) + " entries)"
                         : std::string("no rows");
  if (!types.present) return text;
  text += " + typed: " + std::to_string(types.num_types()) + " type(s) of dim";
  for (int64_t k = 0; k < types.num_types() && k < 8; ++k)
    text += (k == 0 ? " " : ", ") + std::to_string(types.dim[k]);
  if (types.num_types() > 8) text += ", ...";
  return text + " (dim 0: a shared table), on " +
         std::to_string(static_cast<int64_t>(typed_regions)) + " of " +
         std::to_string(static_cast<int64_t>(regions)) + " " + kind;
}

int64_t typed_regions(const RegionTypes& types) {
  return std::count_if(types.type.begin(), types.type.end(), [](int32_t k) { return k >= 0; });
}

// How the largest examples would split into `shards` shards, as lines for rank 0 to print: each
// rank splits its own largest, rank 0 keeps the largest of all. Collective; an impossible count
// fails on every rank.
std::string describe_shards(const Dataset& slice, const std::string& path, int shards,
                            Communicator& comm) {
  constexpr int kShown = 3;
  std::vector<int64_t> order(static_cast<size_t>(slice.num_examples()));
  for (int64_t n = 0; n < slice.num_examples(); ++n) order[n] = n;
  const auto variables = [&](int64_t n) { return slice.var_offset[n + 1] - slice.var_offset[n]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return variables(a) > variables(b); });
  order.resize(std::min<size_t>(order.size(), kShown));
  // Each line starts with its example's size and index, zero-padded, so that rank 0 can sort them
  // as text: the largest first, the first in the file among equals.
  std::string lines;
  run_collectively(comm, [&] {
    for (const int64_t n : order) {
      const ShardPartition p = partition_example(slice, n, n + 1, shards, path);
      std::string sizes;
      for (const int64_t size : p.variables) {
        if (!sizes.empty()) sizes += '/';
        sizes += std::to_string(size);
      }
      char key[48];
      std::snprintf(key, sizeof key, "%020lld %020lld|", static_cast<long long>(variables(n)),
                    static_cast<long long>(slice.first_example + n));
      lines += key;
      lines += "    example " + std::to_string(slice.first_example + n) + ": ";
      lines += std::to_string(variables(n)) + " variables -> " + sizes + ", ";
      lines += std::to_string(p.cut_factors) + " of ";
      lines += std::to_string(slice.factor_offset[n + 1] - slice.factor_offset[n]);
      lines += " factors cut (" + p.method + ")\n";
    }
  });
  const std::vector<std::string> gathered = comm.gather_to_root(lines);
  std::vector<std::string> all;
  for (const std::string& text : gathered) {
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);) all.push_back(line);
  }
  std::sort(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
    const int size = a.compare(0, 20, b, 0, 20);
    return size != 0 ? size > 0 : a.compare(21, 20, b, 21, 20) < 0;
  });
  std::string text = "  split into " + std::to_string(shards) + " shards (the largest examples):\n";
  for (size_t i = 0; i < all.size() && i < kShown; ++i)
    text += all[i].substr(all[i].find('|') + 1) + "\n";
  return text;
}

// Validates a data set exactly as training reads it and prints its sizes, and with `shards` > 0
// how its largest examples would split. Collective.
void describe_dataset(const std::string& path, bool quiet, int shards, Communicator& comm) {
  DatasetLayout layout;
  Progress progress(comm.is_root() && !quiet, "pdsp info");
  const Dataset slice = load_rank_slice(path, comm, &layout,
                                        [&](const std::string& stage) { progress.update(stage); });
  // The counting numbers of the file must allow the message update, as training will check.
  run_collectively(comm, [&] {
    if (slice.has_counting())
      make_counting_numbers(slice, FactorGraph(slice), CountingMode::File, path);
  });
  double unobserved = 0;  // labels -1
  if (slice.has_labels())
    for (int64_t v = 0; v < slice.owned_vars(); ++v) unobserved += slice.label[v] < 0;
  double sums[6] = {static_cast<double>(slice.var_features.nnz()),
                    static_cast<double>(slice.factor_features.nnz()),
                    static_cast<double>(typed_regions(slice.var_types)),
                    static_cast<double>(typed_regions(slice.factor_types)),
                    static_cast<double>(slice.observations.nnz()),
                    unobserved};
  double maxima[2] = {0, 0};  // largest cardinality and arity
  for (int32_t c : slice.card) maxima[0] = std::max(maxima[0], static_cast<double>(c));
  for (int64_t a = 0; a < slice.num_factors(); ++a)
    maxima[1] = std::max(maxima[1], static_cast<double>(slice.arity(a)));
  comm.allreduce(sums, maxima);
  // Every rank reads it, so a damaged attribute is one error for all, not an abort.
  Provenance provenance;
  run_collectively(comm, [&] { provenance = read_provenance(h5::File::open_read(path)); });
  const std::string shard_lines = shards > 0 ? describe_shards(slice, path, shards, comm) : "";
  if (!comm.is_root()) return;

  std::printf("%s: valid pdsp-dataset (format_version %lld)\n", path.c_str(),
              static_cast<long long>(layout.format_version));
  std::printf("  examples            %lld\n", static_cast<long long>(layout.num_examples()));
  std::printf("  variables           %lld (max cardinality %g)\n",
              static_cast<long long>(layout.num_vars()), maxima[0]);
  std::printf("  factors             %lld (max arity %g)\n",
              static_cast<long long>(layout.num_factors()), maxima[1]);
  std::printf("  states              %lld\n", static_cast<long long>(layout.state_offset.back()));
  std::printf("  factor table entries %lld\n", static_cast<long long>(layout.table_offset.back()));
  std::printf("  parameters          %lld\n", static_cast<long long>(layout.num_params));
  const CompactLayout& compact = layout.compact;
  std::printf("  variable features   %s\n",
              encoding_text(layout.has_var_rows, sums[0], compact.var_types, sums[2],
                            static_cast<double>(layout.num_vars()), "variables")
                  .c_str());
  std::printf("  factor features     %s\n",
              encoding_text(layout.has_factor_rows, sums[1], compact.factor_types, sums[3],
                            static_cast<double>(layout.num_factors()), "factors")
                  .c_str());
  if (!compact.obs_offset.empty())
    std::printf("  observation rows    %lld (%.0f entries%s)\n",
                static_cast<long long>(compact.obs_offset.back()), sums[4],
                compact.has_obs_values ? "" : ", binary: no /obs/value");
  if (!layout.has_labels)
    std::printf("  labels              no (pdsp train needs them; pdsp predict does not)\n");
  else if (sums[5] == 0)
    std::printf("  labels              yes\n");
  else
    std::printf(
        "  labels              yes, %.0f of %lld unobserved (-1: --learner latent "
        "learns with them, predict --clamp predicts them)\n",
        sums[5], static_cast<long long>(layout.num_vars()));
  std::printf("  counting numbers    %s\n",
              layout.has_var_counting && layout.has_factor_counting ? "yes" : "no");
  std::printf("  loss table          %s\n", layout.has_loss ? "yes" : "no");
  const NonlocalTerms& nonlocal = layout.nonlocal;
  if (nonlocal.num_states > 0)
    std::printf(
        "  non-local terms     %d states; %lld count templates, %lld instances; %lld "
        "words%s%s\n",
        nonlocal.num_states, static_cast<long long>(nonlocal.num_templates()),
        static_cast<long long>(nonlocal.count_template.size()),
        static_cast<long long>(nonlocal.num_words()), nonlocal.unigram ? ", unigram" : "",
        nonlocal.position ? ", position" : "");
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
  std::printf("%s", shard_lines.c_str());
  print_provenance(provenance, path);
}

// Prints the provenance of a file pdsp wrote (model, prediction, checkpoint), and with
// `config_out` writes its effective settings as a config file that re-runs it.
void describe_output(const h5::File& file, const std::string& format,
                     const std::string& config_out) {
  // A model is checked as predict reads it, before anything is printed.
  std::optional<ModelFile> model;
  if (format == kModelFormat) {
    model = read_model(file.path());
    check_model_names(*model, file.path());
  }
  const Provenance provenance = read_provenance(file);
  std::printf("%s: %s (format_version %lld)\n", file.path().c_str(), format.c_str(),
              static_cast<long long>(file.read_int_attribute("format_version")));
  print_provenance(provenance, file.path());
  // A model's non-local weights are what theta does not hold.
  if (model && !model->psi.empty())
    std::printf("non-local weights: %zu (largest %.4g)\n", model->psi.size(),
                *std::max_element(model->psi.begin(), model->psi.end()));
  // The trees of a boosted class (what theta does not hold), checked as read_model checks them.
  for (const StoredEnsemble& e : model ? model->trees : read_ensembles(file))
    std::printf(
        "trees: %s type %d, %lld rounds of %d trees (one per output), %lld bytes of "
        "XGBoost model\n",
        e.kind.c_str(), e.type, static_cast<long long>(e.trees() / e.outputs), e.outputs,
        static_cast<long long>(e.booster.size()));
  if (config_out.empty()) return;
  if (provenance.config.empty())
    throw InputError(file.path() + ": @effective_config: the file records no settings to write");
  write_output(config_out, [&](const std::string& temporary) {
    std::ofstream out(temporary);
    out << "# settings of " << file.path() << ", written by " << provenance.command_line << "\n"
        << provenance.config;
    if (!out.flush()) throw InputError(temporary + ": cannot write the config file");
  });
  std::printf("settings written to %s\n", config_out.c_str());
}

}  // namespace

int run_info(const Invocation& invocation, Communicator& comm) {
  std::string path, config_out;
  bool quiet = false;
  CommandLine command_line(
      invocation.command,
      "Validates a pdsp data set and prints a summary, or prints the provenance of a model,\n"
      "prediction or checkpoint file (which pdsp, commit, command line, hosts, settings).\n"
      "usage: pdsp info FILE [--write-config OUT.toml]");
  CLI::App& app = command_line.flags();
  app.add_option("file,--data", path, "the file to inspect")->required();
  app.add_option("--write-config", config_out,
                 "write a model's or checkpoint's settings as a config file (pdsp train --config)");
  app.add_flag("--quiet", quiet, "no progress lines while a large data set is read");
  int shards = 0;
  app.add_option("--shards", shards,
                 "show how the largest examples would split into this many shards (grid blocks "
                 "or METIS), with the factors the cut crosses");
  if (!command_line.parse_collectively(invocation.args, comm)) return 0;

  // The format attribute tells a data set from the files pdsp writes.
  std::string format;
  run_collectively(comm, [&] {
    check_outputs({{"--write-config", config_out}}, {{"FILE", path}});
    const h5::File file = h5::File::open_read(path);
    format = file.has_attribute("format") ? file.read_string_attribute("format") : "";
  });
  if (format == kDatasetFormat || format.empty()) {
    run_collectively(comm, [&] {
      if (!config_out.empty())
        throw InputError("--write-config: " + path + " is a data set; it records no settings");
      if (app.count("--shards") > 0 && shards < 1)
        throw InputError("--shards: " + std::to_string(shards) + " is not a shard count (>= 1)");
    });
    describe_dataset(path, quiet, shards, comm);
    return 0;
  }
  run_collectively(comm, [&] {
    if (comm.is_root()) describe_output(h5::File::open_read(path), format, config_out);
  });
  return 0;
}

}  // namespace pdsp
