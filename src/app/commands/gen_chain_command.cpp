// pdsp gen chain: large sparse linear-chain data (gen/chain.hpp), a training and a test file.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/gen/chain.hpp"

namespace pdsp {
namespace {

struct ChainFlags {
  std::string train, test;
  ChainOptions options;
  int test_sentences = 1000, seed = 1;
  bool quiet = false;
};

void declare_flags(CLI::App& app, ChainFlags& f) {
  const std::string data = "Data";
  add_generator_outputs(app, f.train, f.test, f.quiet, "Output");
  app.add_option("--sentences", f.options.sentences, "training sentences")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--test-sentences", f.test_sentences, "test sentences")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--attributes", f.options.attributes,
                 "attributes A (parameters: A x labels + labels x labels)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--labels", f.options.labels, "labels L, the states of every token")
      ->check(whole_at_least(2))
      ->group(data);
  app.add_option("--active", f.options.active,
                 "distinct attributes per token (at most --attributes)")
      ->check(whole_at_least(1))
      ->group(data);
  app.add_option("--zipf", f.options.zipf,
                 "exponent s of the attributes' Zipf law: rank r drawn with weight r^-s")
      ->check(finite_at_least(0))
      ->group(data);
  app.add_option("--seed", f.seed,
                 "random seed of the hidden model and the training sentences (the test file: the "
                 "same model, sentences from seed + 1)")
      ->group(data);
}

}  // namespace

int run_gen_chain(const Invocation& invocation, Communicator& comm) {
  ChainFlags f;
  CommandLine command_line(
      invocation.command,
      "Writes large sparse linear-chain data in format 2, CRFsuite's model: sentences whose\n"
      "tokens observe Zipf-distributed binary attributes, labels from a hidden chain model;\n"
      "A x L attribute weights and one L x L transition table shared by every edge.");
  declare_flags(command_line.flags(), f);
  if (!command_line.parse_collectively(invocation.args, comm)) return 0;
  ChainOptions train = f.options, test = f.options;
  train.seed = train.model_seed = test.model_seed = static_cast<uint64_t>(f.seed);
  test.seed = train.seed + 1;
  test.sentences = f.test_sentences;
  run_collectively(comm, [&] {
    check_chain_options(train);
    if (!f.test.empty()) check_chain_options(test);
    check_outputs({{"--train", f.train}, {"--test", f.test}}, {});
  });
  const Provenance provenance = describe_run(invocation, command_line.effective_config(), "", comm);
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;  // one writer
    Progress progress(!f.quiet, "pdsp gen chain");
    for (const auto& [path, options] : {std::pair{f.train, train}, std::pair{f.test, test}}) {
      if (path.empty()) continue;
      progress.update("generating " + path);
      const Dataset data = generate_chain(options);
      progress.update("writing " + path);
      write_dataset(path, data, provenance);
      // CRFsuite counts only the attributes its training file holds.
      std::vector<uint8_t> seen(static_cast<size_t>(options.attributes), 0);
      for (const int32_t j : data.observations.index) seen[j] = 1;
      std::printf(
          "wrote %s: %d sentences, %lld tokens, %lld parameters (%d attributes x %d "
          "labels + %d x %d transitions); %lld of the attributes occur\n",
          path.c_str(), options.sentences, static_cast<long long>(data.num_vars()),
          static_cast<long long>(data.num_params), options.attributes, options.labels,
          options.labels, options.labels,
          static_cast<long long>(std::count(seen.begin(), seen.end(), 1)));
    }
  });
  return 0;
}

}  // namespace pdsp
