#include <omp.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "pdsp/app/checkpointing.hpp"
#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/app/json_line.hpp"
#include "pdsp/app/process_memory.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/app/run_log.hpp"
#include "pdsp/app/run_view.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/errors.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learning/crf_baselines.hpp"
#include "pdsp/learning/ssvm_frank_wolfe.hpp"
#include "pdsp/learning/trainer.hpp"
#include "pdsp/parallel/share_from_root.hpp"
#include "pdsp/util/clock.hpp"

namespace pdsp {
namespace {

struct TrainOptions {
  TrainConfig config;
  std::string counting = "auto";
  std::string shards = "auto";
  CheckpointOptions checkpoints;
  bool quiet = false;
  double seconds_load = 0;    // scanning the file and reading the slices (the slowest rank)
  std::string layout;         // which ranks hold which examples, and how split ones were cut
  std::string whole_because;  // what kept --shards auto from splitting examples
  Provenance provenance;      // of this run (the hosts on rank 0 only)
};

void declare_flags(CLI::App& app, TrainOptions& o) {
  TrainConfig& c = o.config;
  const std::string files = "Files", model = "Model", stop = "Optimisation and stopping",
                    speed = "Performance", baselines = "Likelihood baselines (--learner)",
                    checkpoints = "Checkpoints and requeueing";
  app.add_option("--data", c.data, "training data set (pdsp-dataset HDF5)")
      ->required()
      ->group(files);
  app.add_option("--out", c.out, "model file to write (HDF5)")->required()->group(files);
  app.add_option("--metrics", c.metrics, "JSONL metrics file (first line: run metadata)")
      ->group(files);
  app.add_flag("--quiet", o.quiet, "no settings, progress lines or iteration table on the console")
      ->group(files);
  app.add_option("--learner", c.learner,
                 "primal-dual; ssvm-fw (eps = 0 on binary pairwise data: block Frank-Wolfe on "
                 "the structured SVM dual with an exact LP oracle); or a likelihood baseline")
      ->check(
          CLI::IsMember({"primal-dual", "ssvm-fw", "lbp-sgd", "lbp-lbfgs", "mf-sgd", "mf-lbfgs"}))
      ->group(model);
  app.add_option("--epsilon", c.epsilon, "entropy temperature: 1 = CRF, 0 = structured SVM")
      ->check(finite_at_least(0))
      ->group(model);
  app.add_option("--smoothing-start", c.smoothing_start,
                 "eps = 0: the temperature training starts at and lowers until the gap at eps = "
                 "0 is below tol")
      ->check(finite_at_least(0))
      ->group(model);
  app.add_option("--C", c.C, "regularisation weight (> 0)")
      ->check(finite_at_least(0))
      ->group(model);
  app.add_option("--p", c.p, "regulariser norm (C/p) |theta|_p^p")
      ->check(finite_at_least(1))
      ->group(model);
  app.add_option("--counting", o.counting, "counting numbers")
      ->check(CLI::IsMember({"auto", "file", "uniform", "bethe"}))
      ->group(model);
  app.add_option("--loss-weight", c.loss_weight, "scale of the loss augmentation e_v(s)")
      ->check(finite_at_least(0))
      ->group(model);
  app.add_option("--sweeps", c.sweeps, "message sweeps per outer iteration")
      ->check(CLI::PositiveNumber)
      ->group(stop);
  app.add_option("--max-iters", c.max_iters,
                 "maximum outer iterations (baselines: L-BFGS iterations or SGD epochs)")
      ->check(CLI::NonNegativeNumber)
      ->group(stop);
  app.add_option("--tol", c.tol, "stop when the relative decrease of F (or the gap) is below")
      ->check(finite_at_least(0))
      ->group(stop);
  app.add_option("--max-seconds", c.max_seconds, "stop after this wall time (0: no limit)")
      ->check(finite_at_least(0))
      ->group(stop);
  app.add_option("--theta-step", c.theta_step,
                 "direction of the step on theta: lbfgs (quasi-Newton) or gradient")
      ->check(CLI::IsMember({"lbfgs", "gradient"}))
      ->group(stop);
  app.add_option("--lbfgs-memory", c.lbfgs_memory, "curvature pairs L-BFGS keeps")
      ->check(CLI::Range(1, 1000))
      ->group(stop);
  app.add_option("--lbfgs-curvature", c.lbfgs_curvature,
                 "L-BFGS's initial curvature: softmax (typed blocks' soft-max curvature by "
                 "conjugate gradients), kronecker (their Kronecker model), auto (softmax where "
                 "a block has more than 2 states, else kronecker) or identity")
      ->check(CLI::IsMember({"auto", "softmax", "kronecker", "identity"}))
      ->group(stop);
  app.add_option("--step", c.initial_step,
                 "first step of the Armijo search along the gradient (SGD: step scale)")
      ->check(finite_at_least(0))
      ->group(stop);
  app.add_option("--max-step-trials", c.max_step_trials, "objective evaluations per step search")
      ->check(CLI::Range(1, 200))
      ->group(stop);
  app.add_option("--threads", c.threads, "OpenMP threads per rank (0: OMP_NUM_THREADS)")
      ->check(CLI::NonNegativeNumber)
      ->group(speed);
  app.add_option("--kernels", c.kernels,
                 "auto (specialised kernels where they apply) or general (for comparisons)")
      ->check(CLI::IsMember({"auto", "general"}))
      ->group(speed);
  add_shards_option(app, o.shards, speed);
  app.add_option("--message-precision", c.message_precision,
                 "single: float messages in the binary pairwise kernels (less memory traffic)")
      ->check(CLI::IsMember({"double", "single"}))
      ->group(speed);
  app.add_option("--inference-sweeps", c.inference_sweeps, "inference sweeps per evaluation")
      ->check(CLI::PositiveNumber)
      ->group(baselines);
  app.add_option("--inference-tol", c.inference_tol, "inference convergence tolerance")
      ->check(finite_at_least(0))
      ->group(baselines);
  CheckpointOptions& k = o.checkpoints;
  app.add_option("--checkpoint-dir", k.directory, "directory for checkpoints")->group(checkpoints);
  app.add_option("--checkpoint-every", k.every, "checkpoint every N iterations (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->group(checkpoints);
  app.add_option("--checkpoint-seconds", k.seconds,
                 "checkpoint every S seconds (default 300 when no interval is given)")
      ->check(finite_at_least(0))
      ->group(checkpoints);
  app.add_option("--keep-checkpoints", k.keep, "checkpoints kept in the directory")
      ->check(CLI::PositiveNumber)
      ->group(checkpoints);
  app.add_option("--resume", k.resume,
                 "auto (newest valid checkpoint of --checkpoint-dir, or a fresh start) or a file")
      ->group(checkpoints);
  app.add_option("--max-walltime", k.max_walltime,
                 "seconds this job may run: checkpoint and exit 75 before the limit (0: none)")
      ->check(finite_at_least(0))
      ->group(checkpoints);
}

// Everything that can be checked before the data set is opened: flag combinations, outputs
// writable, the learner's restrictions. On every rank.
void check_before_work(TrainOptions& o) {
  TrainConfig& config = o.config;
  config.counting = parse_counting_mode(o.counting);
  config.validate();
  o.checkpoints.validate();
  if (config.learner != "primal-dual" &&
      (!o.checkpoints.directory.empty() || !o.checkpoints.resume.empty()))
    throw InputError("--learner " + config.learner +
                     ": checkpoints are for the primal-dual learner");
  // The other learners run their own inference on whole examples: they keep every example whole
  // (auto), and refuse a forced split.
  if (config.learner != "primal-dual") {
    if (parse_shard_count(o.shards) > 1)
      throw InputError("--shards " + o.shards + ": --learner " + config.learner +
                       " needs whole examples; use --shards 1 or auto");
    if (o.shards != "1") o.whole_because = "--learner " + config.learner;
    o.shards = "1";
  }
  check_outputs({{"--out", config.out}, {"--metrics", config.metrics}},
                {{"--data", config.data}, {"--resume", o.checkpoints.resume}});
  check_output_directory({"--checkpoint-dir", o.checkpoints.directory});
}

// `seconds_setup`: building the local problems (slot index, counting numbers, colouring, plans),
// the slowest rank's.
std::string metadata_line(const TrainOptions& o, const DatasetLayout& layout, double seconds_setup,
                          Communicator& comm) {
  const TrainConfig& config = o.config;
  JsonLine line;
  line.add("type", "run").add("program", "pdsp train");
  line.add(config.fields());
  line.add(o.provenance.fields());
  line.add("examples", layout.num_examples())
      .add("variables", layout.num_vars())
      .add("factors", layout.num_factors())
      .add("params", layout.num_params)
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

// The halo exchanges of split examples over the run: values sent (all ranks), the slowest rank's
// seconds in them, sweeps; printed on rank 0 and returned for the metrics' end record (empty when
// no example was split). Collective.
Fields halo_summary(const LocalProblem& problem, Communicator& comm) {
  const HaloExchange* halo = problem.halo();
  double sums[2] = {halo ? static_cast<double>(halo->values_sent()) : 0.0, halo ? 1.0 : 0.0};
  double maxima[2] = {halo ? halo->seconds() : 0.0, halo ? static_cast<double>(halo->sweeps()) : 0};
  comm.allreduce(sums, maxima);
  if (sums[1] == 0) return {};
  if (comm.is_root())
    std::printf(
        "halo exchanges: %.3f MB sent by %g shard(s) in %g sweeps, at most %.3f s on one "
        "rank\n",
        8e-6 * sums[0], sums[1], maxima[1], maxima[0]);
  return {{"halo_values_sent", sums[0]}, {"halo_seconds", maxima[0]}, {"halo_sweeps", maxima[1]}};
}

double largest_over_ranks(double value, Communicator& comm) {
  double largest[1] = {value};
  comm.allreduce({}, largest);
  return largest[0];
}

double largest_peak_memory(Communicator& comm) {
  return largest_over_ranks(static_cast<double>(peak_resident_bytes()), comm);
}

// The primal-dual trainer with checkpoints. Sets `requeue` when it stopped to be run again.
TrainResult train_primal_dual(const Dataset& slice, const DatasetLayout& layout, TrainOptions& o,
                              const CheckpointView& checkpoints, Communicator& comm,
                              bool& requeue) {
  TrainConfig& config = o.config;
  std::unique_ptr<LocalProblem> problem;
  const auto setup_start = Clock::now();
  run_collectively(comm, [&] {
    ProblemSettings settings{.epsilon = config.epsilon,
                             .counting = config.counting,
                             .loss_weight = config.loss_weight,
                             .loss_augmented = true,
                             .source = config.data,
                             .specialised_kernels = config.kernels == "auto",
                             .message_precision = config.message_precision == "single"
                                                      ? MessagePrecision::Single
                                                      : MessagePrecision::Double,
                             .smoothing = config.epsilon == 0 ? config.smoothing_start : 0.0};
    problem = std::make_unique<LocalProblem>(slice, settings);
    config.counting = problem->counting().mode;
  });
  const double seconds_setup = largest_over_ranks(seconds_since(setup_start), comm);
  if (comm.is_root())
    std::printf("kernels (rank 0): %s; set up in %.2f s\n", problem->kernel_name().c_str(),
                seconds_setup);

  Checkpoint identity;
  identity.config_line = config.to_line();
  identity.compatibility = config.trajectory_fields();
  identity.data_fingerprint = o.provenance.data_fingerprint;
  identity.provenance = o.provenance;
  const std::optional<Checkpoint> resumed =
      resume_training(o.checkpoints, checkpoints, identity, *problem, comm);

  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    log = std::make_unique<RunLog>(
        comm.is_root(), !o.quiet, config.metrics, metadata_line(o, layout, seconds_setup, comm),
        resumed ? resumed->metrics_bytes : -1, resumed ? resumed->metrics_checksum : "");
  });
  CheckpointingObserver observer(*log, o.checkpoints, identity, comm);
  const TrainResult result =
      train(*problem, config, comm, observer, resumed ? resumed->state : TrainingState{});
  const Fields halo = halo_summary(*problem, comm);
  log->finish(result, largest_peak_memory(comm), observer.seconds_writing(), halo);
  requeue = observer.requeue();
  return result;
}

// A likelihood baseline (Hazan & Urtasun's Figure 2 rows).
TrainResult train_baseline(const Dataset& slice, const DatasetLayout& layout, TrainOptions& o,
                           Communicator& comm) {
  const TrainConfig& config = o.config;
  BaselineConfig baseline;
  std::unique_ptr<ApproximateCrf> crf;
  const auto setup_start = Clock::now();
  run_collectively(comm, [&] {
    parse_baseline_learner(config.learner, baseline);
    if (!slice.has_labels())
      throw InputError(config.data + ": /vars/label: training needs ground-truth labels");
    crf = std::make_unique<ApproximateCrf>(slice, baseline.inference, config.inference_sweeps,
                                           config.inference_tol);
  });
  const double seconds_setup = largest_over_ranks(seconds_since(setup_start), comm);
  baseline.C = config.C;
  baseline.max_iters = config.max_iters;
  baseline.tol = config.tol;
  baseline.step = config.initial_step;
  baseline.inference_sweeps = config.inference_sweeps;
  baseline.inference_tol = config.inference_tol;
  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    // The baselines minimise the regularised negative conditional log-likelihood under their
    // approximate inference, not the primal-dual F.
    log = std::make_unique<RunLog>(comm.is_root(), !o.quiet, config.metrics,
                                   metadata_line(o, layout, seconds_setup, comm), -1, "",
                                   "neg_log_likelihood");
  });
  const TrainResult result = train_crf_baseline(*crf, baseline, comm, *log);
  log->finish(result, largest_peak_memory(comm), NAN);
  return result;
}

// The structured SVM by block Frank-Wolfe (eps = 0, binary pairwise data).
TrainResult train_ssvm(const Dataset& slice, const DatasetLayout& layout, TrainOptions& o,
                       Communicator& comm) {
  const TrainConfig& config = o.config;
  const auto setup_start = Clock::now();
  SsvmFrankWolfe learner(
      slice, {config.C, config.loss_weight, config.max_iters, config.tol, config.max_seconds},
      comm);
  const double seconds_setup = largest_over_ranks(seconds_since(setup_start), comm);
  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    log = std::make_unique<RunLog>(comm.is_root(), !o.quiet, config.metrics,
                                   metadata_line(o, layout, seconds_setup, comm), -1, "");
  });
  const TrainResult result = learner.run(*log);
  log->finish(result, largest_peak_memory(comm), NAN);
  return result;
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
  // Rank 0 reads the config file, checks the settings and the outputs, and looks at the
  // checkpoint directory; every rank receives that one view, then checks the same on its own
  // (outputs on every node), all before the data set is opened.
  const RunView view = share_from_root<RunView>(comm, [&](RunView& v) {
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
  if (comm.is_root() && !o.quiet)
    std::printf("settings:\n%s", command_line.effective_config().c_str());

  const auto started = Clock::now();
  DatasetLayout layout;
  Progress progress(comm.is_root() && !o.quiet, "pdsp train");
  std::vector<RankSlice> plan;
  const Dataset slice = load_rank_slice(
      config.data, comm, &layout, [&](const std::string& stage) { progress.update(stage); },
      parse_shard_count(o.shards), &plan);
  o.layout = describe_layout(slice, plan, comm);
  if (!o.whole_because.empty()) o.layout += " (" + o.whole_because + " keeps examples whole)";
  progress.update("fingerprinting the training set");
  o.seconds_load = largest_over_ranks(seconds_since(started), comm);
  o.provenance = describe_run(invocation, command_line.effective_config(),
                              dataset_fingerprint(slice, comm), comm);
  if (comm.is_root())
    std::printf(
        "pdsp train: %lld examples, %lld variables, %lld factors, %lld parameters on "
        "%d rank(s) x %d thread(s), read in %.2f s\nlayout: %s\n%s\n",
        static_cast<long long>(layout.num_examples()), static_cast<long long>(layout.num_vars()),
        static_cast<long long>(layout.num_factors()), static_cast<long long>(layout.num_params),
        comm.size(), omp_get_max_threads(), o.seconds_load, o.layout.c_str(),
        config.to_line().c_str());

  const bool primal_dual = config.learner == "primal-dual";
  const bool likelihood = !primal_dual && config.learner != "ssvm-fw";
  bool requeue = false;
  const TrainResult result =
      primal_dual  ? train_primal_dual(slice, layout, o, view.checkpoints, comm, requeue)
      : likelihood ? train_baseline(slice, layout, o, comm)
                   : train_ssvm(slice, layout, o, comm);
  if (requeue) {
    if (comm.is_root())
      std::printf("checkpoint written to %s; run the same command to continue (exit %d)\n",
                  o.checkpoints.directory.c_str(), kExitRequeue);
    return kExitRequeue;
  }
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    // A likelihood baseline's model predicts with the learner's own inference, a CRF at eps = 1.
    TrainConfig recorded = config;
    if (likelihood) recorded.epsilon = 1.0;
    Fields attributes = recorded.fields();
    if (likelihood)
      attributes.emplace_back("inference",
                              config.learner.rfind("lbp", 0) == 0 ? "lbp" : "mean-field");
    attributes.emplace_back("iterations", int64_t{result.state.iterations_done});
    attributes.emplace_back("stop_reason", result.stop_reason);
    write_model(config.out, result.state.theta, attributes, o.provenance);
    std::printf("model written to %s (this process ran %.3f s)\n", config.out.c_str(),
                seconds_since(started));
  });
  // The stop reason is the same on every rank (it came through the allreduce); the local signal
  // flag is not.
  return result.stop_reason.find("signal") != std::string::npos ? kExitInterrupted : 0;
}

}  // namespace pdsp
