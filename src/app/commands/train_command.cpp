#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "pdsp/app/checkpointing.hpp"
#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/app/json_line.hpp"
#include "pdsp/app/nonlocal_phase.hpp"
#include "pdsp/app/process_memory.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/app/run_log.hpp"
#include "pdsp/app/run_view.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/app/validation.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/data/parameter_compaction.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/train_parameters.hpp"
#include "pdsp/parallel/share_from_root.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

struct TrainOptions {
  TrainConfig config;
  std::string shards = "auto";
  CheckpointOptions checkpoints;
  bool quiet = false;
  double seconds_load = 0;    // scanning the file and reading the slices (the slowest rank)
  std::string layout;         // which ranks hold which examples, and how split ones were cut
  std::string whole_because;  // what kept --shards auto from splitting examples
  Provenance provenance;      // of this run (the hosts on rank 0 only)
};

// What --help shows of a numeric rule: its bounds ("> 0", "0 or >= 1e-12", "in [1, 200]").
std::string bounds_of(std::string rule) {
  for (const std::string kind : {"a finite number ", "a whole number "})
    if (const size_t at = rule.find(kind); at != std::string::npos) rule.erase(at, kind.size());
  return rule;
}

// The CLI11 check of a row's rule: its words, or a number (a whole one for int members) that
// the rule admits, in one line naming the value and the rule.
CLI::Validator rule_check(const TrainParameter& p) {
  if (!p.rule.words.empty()) return CLI::IsMember(p.rule.words);
  const bool whole = p.is_whole();
  const std::string rule = p.rule.text(whole);
  return CLI::Validator(
      [rule, whole, p](std::string& text) -> std::string {
        double value = 0;
        int64_t integer = 0;
        const bool parsed = whole ? CLI::detail::lexical_cast(text, integer)
                                  : CLI::detail::lexical_cast(text, value);
        if (whole) value = static_cast<double>(integer);
        if (!parsed && !whole) return "'" + text + "' is not a number";
        if (!parsed || !p.rule.admits(value)) return "'" + text + "' is not " + rule;
        return "";
      },
      bounds_of(rule));
}

// One flag per row of the table (train_parameters.hpp), and the run options that are not
// hyper-parameters: --quiet, --shards, the checkpoints.
void declare_flags(CLI::App& app, TrainOptions& o) {
  TrainConfig& c = o.config;
  for (const TrainParameter& p : train_parameters()) {
    CLI::Option* option = std::visit(
        [&](auto TrainConfig::*m) -> CLI::Option* {
          using Value = std::remove_reference_t<decltype(c.*m)>;
          if constexpr (std::is_same_v<Value, CountingMode>)
            return app
                .add_option_function<std::string>(
                    p.flag, [&c, m](const std::string& name) { c.*m = parse_counting_mode(name); },
                    p.help)
                ->default_str(counting_mode_name(c.*m));
          else
            return app.add_option(p.flag, c.*m, p.help);
        },
        p.member);
    option->group(p.group);
    if (p.required) option->required();
    if (!p.rule.text(p.is_whole()).empty()) option->check(rule_check(p));
  }
  // --help lists a group's flags in the order they were added, after the table's.
  app.add_flag("--quiet", o.quiet,
               "on the console only why training stopped, where the model went, warnings and "
               "errors: no settings, set-up, progress lines or iteration table")
      ->group(kFilesGroup);
  add_shards_option(app, o.shards, kPerformanceGroup);
  // Acted on before parsing (list_parameters), so that it needs no --data or --out.
  app.add_flag_function(
         "--list-parameters", [](int64_t) {},
         "print the settings above as JSON lines (flag, default, rule, help) "
         "and exit")
      ->configurable(false)
      ->group(kFilesGroup);
  const std::string checkpoints = "Checkpoints and requeueing";
  CheckpointOptions& k = o.checkpoints;
  app.add_option("--checkpoint-dir", k.directory, "directory for checkpoints")->group(checkpoints);
  app.add_option("--checkpoint-every", k.every, "checkpoint every N iterations (0: off)")
      ->check(whole_at_least(0))
      ->group(checkpoints);
  app.add_option("--checkpoint-seconds", k.seconds,
                 "checkpoint every S seconds (default 300 when no interval is given)")
      ->check(finite_at_least(0))
      ->group(checkpoints);
  app.add_option("--keep-checkpoints", k.keep, "checkpoints kept in the directory")
      ->check(whole_at_least(1))
      ->group(checkpoints);
  app.add_option("--resume", k.resume,
                 "auto (newest valid checkpoint of --checkpoint-dir, or a fresh start) or a file")
      ->group(checkpoints);
  app.add_option("--max-walltime", k.max_walltime,
                 "seconds this job may run: checkpoint and exit 75 before the limit (0: none)")
      ->check(finite_at_least(0))
      ->group(checkpoints);
}

// --list-parameters: the table of train_parameters.hpp, one JSON line per row, with the default
// of each (run/train_parameters.py writes the guide's table and the Python defaults from it).
void list_parameters() {
  const TrainConfig defaults;
  for (const TrainParameter& p : train_parameters()) {
    JsonLine line;
    line.add("name", p.name)
        .add("flag", p.flag)
        .add("group", p.group)
        .add("help", p.help)
        .add("type", p.is_whole()                                              ? "int"
                     : std::holds_alternative<double TrainConfig::*>(p.member) ? "float"
                                                                               : "str")
        .add("default", p.value_text(defaults))
        .add("rule", p.rule.text(p.is_whole()))
        .add("words", p.rule.words)
        .add("recorded", p.recorded)
        .add("trajectory", p.trajectory)
        .add("required", p.required);
    std::printf("%s\n", line.str().c_str());
  }
}

// Everything that can be checked before the data set is opened: flag combinations, outputs
// writable, the learner's restrictions. On every rank.
void check_before_work(TrainOptions& o) {
  TrainConfig& config = o.config;
  config.validate();
  // The number itself in the log, the metrics and a checkpoint's trajectory settings, so that
  // checkpoints written when 10 was the only default resume under the automatic choice.
  config.lbfgs_memory = config.lbfgs_pairs();
  const LearnerEntry& learner = find_learner(config.learner);
  check_learner_settings(learner, config,
                         !o.checkpoints.directory.empty() || !o.checkpoints.resume.empty());
  o.checkpoints.validate();
  // Learners that run their own inference on whole examples, and tree-reweighted numbers (drawn
  // from an example's whole graph), keep every example whole (auto), and refuse a forced split.
  for (const auto& [whole, who] :
       {std::pair{!learner.traits.split_examples, "--learner " + config.learner},
        std::pair{config.counting == CountingMode::TreeReweighted, std::string("--counting trw")}})
    if (whole && keep_examples_whole(o.shards, who)) o.whole_because = who;
  check_outputs({{"--out", config.out}, {"--metrics", config.metrics}},
                {{"--data", config.data},
                 {"--dev-data", config.dev_data},
                 {"--validation", config.validation},
                 {"--resume", o.checkpoints.resume}});
  check_output_directory({"--checkpoint-dir", o.checkpoints.directory});
}

// `seconds_setup`: building the local problems (slot index, counting numbers, colouring, plans),
// the slowest rank's.
std::string metadata_line(const TrainOptions& o, const DatasetLayout& layout,
                          int64_t trained_params, double seconds_setup, Communicator& comm) {
  const TrainConfig& config = o.config;
  JsonLine line;
  line.add("type", "run").add("program", "pdsp train");
  line.add(config.fields());
  line.add(o.provenance.fields());
  line.add("examples", layout.num_examples())
      .add("variables", layout.num_vars())
      .add("factors", layout.num_factors())
      .add("params", layout.num_params)
      .add("trained_params", trained_params)
      .add("partition_imbalance",
           partition_imbalance(layout.cost, partition_by_cost(layout.cost, comm.size())))
      .add("layout", o.layout)
      .add("seconds_load", o.seconds_load)
      .add("seconds_setup", seconds_setup);
  return line.str();
}

// The plan in words, with each split example's shard sizes and cut (from its shard 0). Collective.
std::string describe_layout(const Dataset& slice, const std::vector<RankSlice>& plan,
                            Communicator& comm) {
  std::string mine;
  if (slice.shard && slice.shard->index == 0) {
    const ExampleShard& s = *slice.shard;
    mine = s.examples == 1 ? "example " + std::to_string(s.example)
                           : "examples " + std::to_string(s.example) + "-" +
                                 std::to_string(s.example + s.examples - 1);
    mine += ": " + s.method + ", variables per shard";
    for (int64_t v : s.shard_variables) mine += " " + std::to_string(v);
    mine += ", " + std::to_string(s.cut_factors) + " cut factors";
  }
  std::string text = describe_rank_slices(plan);
  for (const std::string& line : comm.gather_to_root(mine))
    if (!line.empty()) text += "; " + line;
  return text;
}

double largest_over_ranks(double value, Communicator& comm) {
  double largest[1] = {value};
  comm.allreduce({}, largest);
  return largest[0];
}

double largest_peak_memory(Communicator& comm) {
  return largest_over_ranks(static_cast<double>(peak_resident_bytes()), comm);
}

// With --validation: the model is the checked theta with the lowest validation error, and the
// console says which iteration it came from.
void choose_validated_model(const ValidationProgress& progress, TrainResult& result, bool quiet,
                            Communicator& comm) {
  if (progress.checks == 0) return;
  result.state.theta = progress.best_theta;
  if (comm.is_root() && !quiet)
    std::printf(
        "validation: %d check(s); the model is theta after iteration %d, validation "
        "error %.4f%%\n",
        progress.checks, progress.best_iteration, progress.best_error);
}

// Sets up the learner on this rank's slice and trains it: with checkpoints (resuming from one
// when asked) where the learner keeps them. Sets `requeue` when it stopped to be run again.
// `model_theta` turns the learner's theta into the model file's.
TrainResult train_learner(Learner& learner, const LearnerTraits& traits, const Dataset& slice,
                          const DatasetLayout& layout, TrainOptions& o, CheckpointView& checkpoints,
                          NonlocalPhase& nonlocal, ValidationSet* validation,
                          const ValidatingObserver::ModelTheta& model_theta, Communicator& comm,
                          bool& requeue) {
  TrainConfig& config = o.config;
  const auto setup_start = Clock::now();
  learner.set_up(slice, config, comm);
  const double seconds_setup = largest_over_ranks(seconds_since(setup_start), comm);
  const std::string summary = learner.set_up_summary();
  if (comm.is_root() && !o.quiet && !summary.empty())
    std::printf("%s; set up in %.2f s\n", summary.c_str(), seconds_setup);

  Checkpoint identity;
  std::optional<Checkpoint> resumed;
  if (traits.checkpoints) {
    identity.config_line = config.to_line();
    identity.compatibility = config.trajectory_fields();
    // The best check so far, which the checkpoint keeps, is only comparable on the same data.
    if (validation) identity.compatibility.emplace_back("validation_data", validation->checksum());
    identity.data_fingerprint = o.provenance.data_fingerprint;
    identity.provenance = o.provenance;
    o.checkpoints.memory_pairs = config.theta_step == "lbfgs" ? config.lbfgs_pairs() : 0;
    resumed = resume_training(o.checkpoints, checkpoints, identity, *learner.checkpointed(), comm);
  }
  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    log = std::make_unique<RunLog>(comm.is_root(), !o.quiet, config.metrics,
                                   metadata_line(o, layout, slice.num_params, seconds_setup, comm),
                                   resumed ? resumed->metrics_bytes : -1,
                                   resumed ? resumed->metrics_checksum : "", traits.objective);
  });
  std::optional<CheckpointingObserver> checkpointing;
  if (traits.checkpoints)
    checkpointing.emplace(*log, o.checkpoints, identity, *learner.checkpointed(), comm);
  TrainingObserver& logging = checkpointing ? static_cast<TrainingObserver&>(*checkpointing) : *log;
  std::optional<ValidatingObserver> validating;
  if (validation)
    validating.emplace(logging, *validation, model_theta, config,
                       resumed ? resumed->state.validation : ValidationProgress{}, comm);
  TrainingObserver& observer = validating ? *validating : logging;
  // Moved: a copy of a large model's state (theta and the L-BFGS pairs) would stay for the run.
  TrainResult result = learner.run(observer, resumed ? std::move(resumed->state) : TrainingState{});
  if (validating) {
    validating->flush();
    choose_validated_model(validating->progress(), result, o.quiet, comm);
  }
  Learner::Summary after = learner.run_summary(comm);
  if (comm.is_root() && !o.quiet && !after.line.empty()) std::printf("%s\n", after.line.c_str());
  requeue = checkpointing && checkpointing->requeue();
  // psi is learned from zero under the final theta: a resumed run learns the same again.
  if (nonlocal.active() && !requeue) {
    if (comm.is_root() && !o.quiet)
      std::printf("theta after %d iterations (%s); learning the non-local weights\n",
                  result.state.iterations_done, result.stop.text.c_str());
    const Fields fields = nonlocal.fit(config, learner.model_theta(result.state.theta),
                                       learner.model_trees(), !o.quiet, comm);
    after.fields.insert(after.fields.end(), fields.begin(), fields.end());
  }
  log->finish(result, largest_peak_memory(comm),
              checkpointing ? checkpointing->seconds_writing() : NAN, after.fields);
  return result;
}

// Training on the parameters the training set reads (parameter_compaction.hpp), unless the
// potentials are not linear in theta (a network's or trees' layout is not the data's), the
// non-local fit reads the training slice with the model file's theta, or the run resumes a
// checkpoint written in the full layout (before compaction existed), which then continues
// exactly. Collective.
ParameterCompaction plan_compaction(const Dataset& slice, const TrainConfig& config,
                                    const NonlocalPhase& nonlocal, const CheckpointView& view,
                                    Communicator& comm) {
  const bool full_checkpoint =
      std::any_of(view.headers.begin(), view.headers.end(),
                  [&](const Checkpoint& c) { return c.num_params == slice.num_params; });
  if (config.unary_model != "linear" || config.pairwise_model != "linear" || nonlocal.active() ||
      full_checkpoint)
    return {};
  return ParameterCompaction::of_training_set(slice, comm);
}

}  // namespace

int run_train(const Invocation& invocation, Communicator& comm) {
  TrainOptions o;
  TrainConfig& config = o.config;
  CommandLine command_line(
      invocation.command,
      "Learns the parameters of a CRF / structured SVM by primal-dual message passing\n"
      "(Hazan & Urtasun 2010) and writes the model file.");
  declare_flags(command_line.flags(), o);
  if (std::find(invocation.args.begin(), invocation.args.end(), "--list-parameters") !=
      invocation.args.end()) {
    if (comm.is_root()) list_parameters();
    return 0;
  }
  // Rank 0 reads the config file, checks the settings and the outputs, and looks at the
  // checkpoint directory; every rank receives that one view, then checks the same on its own
  // (outputs on every node), all before the data set is opened.
  RunView view = share_from_root<RunView>(comm, [&](RunView& v) {
    v.config = command_line.read_config(invocation.args);
    if (!command_line.parse(invocation.args, v.config, /*root=*/false)) return;
    check_before_work(o);
    v.checkpoints = look_at_checkpoints(o.checkpoints);
  });
  bool proceed = true;
  run_collectively(comm, [&] {
    proceed = command_line.parse(invocation.args, view.config, comm.is_root());
    if (proceed) check_before_work(o);
  });
  if (!proceed) return 0;
  use_threads(config.threads);
  install_stop_signals(comm.is_root());
  if (comm.is_root() && !o.quiet) {
    std::printf("settings:\n%s", command_line.effective_config().c_str());
    // A flag the user set that this run ignores is likely a mistake in the command.
    for (const TrainParameter& row : train_parameters())
      if (command_line.given(row.flag) && !config.applies(row))
        std::printf(
            "note: %s is set but changes nothing with --learner %s, --unary-model %s, "
            "--pairwise-model %s, --theta-step %s and --epsilon %s\n",
            row.flag.c_str(), config.learner.c_str(), config.unary_model.c_str(),
            config.pairwise_model.c_str(), config.theta_step.c_str(),
            field_text(config.epsilon).c_str());
  }

  const auto started = Clock::now();
  DatasetLayout layout;
  Progress progress(comm.is_root() && !o.quiet, "pdsp train");
  std::vector<RankSlice> plan;
  Dataset slice = load_rank_slice(
      config.data, comm, &layout, [&](const std::string& stage) { progress.update(stage); },
      parse_shard_count(o.shards), &plan);
  const LearnerEntry& entry = find_learner(config.learner);
  check_learner_data(entry, slice, comm);
  NonlocalPhase nonlocal(config, entry, slice, layout, comm);
  o.layout = describe_layout(slice, plan, comm);
  if (!o.whole_because.empty()) o.layout += " (" + o.whole_because + " keeps examples whole)";
  progress.update("fingerprinting the training set");
  o.seconds_load = largest_over_ranks(seconds_since(started), comm);
  o.provenance = describe_run(invocation, command_line.effective_config(),
                              dataset_fingerprint(slice, comm), comm);
  const ParameterCompaction compaction =
      plan_compaction(slice, config, nonlocal, view.checkpoints, comm);
  compaction.apply(slice);
  const std::string trained = compaction.active()
                                  ? " (" + std::to_string(compaction.compact_params()) +
                                        " read by the training set, trained alone)"
                                  : "";
  if (comm.is_root() && !o.quiet)
    std::printf(
        "pdsp train: %lld examples, %lld variables, %lld factors, %lld parameters%s on "
        "%d rank(s) x %d thread(s), read in %.2f s\nlayout: %s\n%s\n",
        static_cast<long long>(layout.num_examples()), static_cast<long long>(layout.num_vars()),
        static_cast<long long>(layout.num_factors()), static_cast<long long>(layout.num_params),
        trained.c_str(), comm.size(), omp_get_max_threads(), o.seconds_load, o.layout.c_str(),
        config.to_line().c_str());
  if (comm.is_root() && !o.quiet && nonlocal.active())
    std::printf("%s\n", nonlocal.describe().c_str());

  const std::unique_ptr<Learner> learner = entry.make();
  std::unique_ptr<ValidationSet> validation;
  if (!config.validation.empty()) {
    progress.update("reading the validation set " + config.validation);
    validation =
        std::make_unique<ValidationSet>(config, learner->model_attributes(config), layout, comm);
  }
  const ValidatingObserver::ModelTheta model_theta = [&](std::span<const double> theta) {
    return compaction.expand(learner->model_theta(theta));
  };
  bool requeue = false;
  const TrainResult result =
      train_learner(*learner, entry.traits, slice, layout, o, view.checkpoints, nonlocal,
                    validation.get(), model_theta, comm, requeue);
  if (requeue) {
    if (comm.is_root())
      std::printf("checkpoint written to %s; run the same command to continue (exit %d)\n",
                  o.checkpoints.directory.c_str(), kExitRequeue);
    return kExitRequeue;
  }
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    Fields attributes = learner->model_attributes(config);
    attributes.emplace_back("iterations", int64_t{result.state.iterations_done});
    attributes.emplace_back("stop_reason", result.stop.text);
    write_model(config.out, model_theta(result.state.theta), attributes, o.provenance,
                learner->model_trees(), nonlocal.psi());
    std::printf("model written to %s (this process ran %.3f s)\n", config.out.c_str(),
                seconds_since(started));
  });
  // The stop reason is the same on every rank (it came through the allreduce); the local signal
  // flag is not.
  return result.stop.exit_code();
}

}  // namespace pdsp
