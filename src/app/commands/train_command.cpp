#include <omp.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "pdsp/app/arguments.hpp"
#include "pdsp/app/checkpointing.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/json_line.hpp"
#include "pdsp/app/process_memory.hpp"
#include "pdsp/app/run_log.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/errors.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/learning/crf_baselines.hpp"
#include "pdsp/learning/trainer.hpp"
#include "pdsp/util/clock.hpp"

namespace pdsp {
namespace {

struct TrainOptions {
  TrainConfig config;
  std::string counting = "auto";
  CheckpointOptions checkpoints;
  double seconds_load = 0;  // scanning the file and reading the slices (the slowest rank)
};

void declare_flags(Arguments& flags, TrainOptions& o) {
  TrainConfig& c = o.config;
  flags.add("--data", &c.data, "training data set (pdsp-dataset HDF5)");
  flags.add("--out", &c.out, "model file to write (HDF5)");
  flags.add("--epsilon", &c.epsilon, "entropy temperature: 1 = CRF, 0 = structured SVM");
  flags.add("--C", &c.C, "regularisation weight");
  flags.add("--p", &c.p, "regulariser norm (C/p) |theta|_p^p, p >= 1");
  flags.add("--counting", &o.counting, "counting numbers: auto | file | uniform | bethe");
  flags.add("--loss-weight", &c.loss_weight, "scale of the loss augmentation e_v(s)");
  flags.add("--sweeps", &c.sweeps, "message sweeps per outer iteration");
  flags.add("--max-iters", &c.max_iters,
            "maximum outer iterations (baselines: L-BFGS iterations or SGD epochs)");
  flags.add("--tol", &c.tol, "stop when the relative decrease of F (or the gap) is below");
  flags.add("--max-seconds", &c.max_seconds, "stop after this wall time (0: no limit)");
  flags.add("--step", &c.initial_step, "first step of the Armijo search (SGD: step scale)");
  flags.add("--max-step-trials", &c.max_step_trials, "objective evaluations per step search");
  flags.add("--threads", &c.threads, "OpenMP threads per rank (0: OMP_NUM_THREADS)");
  flags.add("--kernels", &c.kernels,
            "auto (specialised kernels where they apply) | general (for comparisons)");
  flags.add("--message-precision", &c.message_precision,
            "double | single (binary pairwise kernels only: float messages, less memory traffic)");
  flags.add("--metrics", &c.metrics, "JSONL metrics file (first line: run metadata)");
  flags.add("--learner", &c.learner,
            "primal-dual | lbp-sgd | lbp-lbfgs | mf-sgd | mf-lbfgs (likelihood baselines)");
  flags.add("--inference-sweeps", &c.inference_sweeps,
            "baselines: inference sweeps per evaluation");
  flags.add("--inference-tol", &c.inference_tol, "baselines: inference convergence tolerance");
  CheckpointOptions& k = o.checkpoints;
  flags.add("--checkpoint-dir", &k.directory, "directory for checkpoints");
  flags.add("--checkpoint-every", &k.every, "checkpoint every N iterations (0: off)");
  flags.add("--checkpoint-seconds", &k.seconds,
            "checkpoint every S seconds (default 300 when no interval is given)");
  flags.add("--keep-checkpoints", &k.keep, "checkpoints kept in the directory");
  flags.add("--resume", &k.resume,
            "auto (newest valid checkpoint of --checkpoint-dir, or a fresh start) or a file");
  flags.add("--max-walltime", &k.max_walltime,
            "seconds this job may run: checkpoint and exit 75 before the limit (0: none)");
  flags.required("--data");
  flags.required("--out");
}

// `seconds_setup`: building the local problems (slot index, counting numbers, colouring, plans),
// the slowest rank's.
std::string metadata_line(const TrainOptions& o, const DatasetLayout& layout, double seconds_setup,
                          Communicator& comm) {
  const TrainConfig& config = o.config;
  JsonLine line;
  line.add("type", "run").add("program", "pdsp train");
  for (const auto& [name, value] : config.fields()) line.add(name, value);
  line.add("ranks", comm.size())
      .add("threads", omp_get_max_threads())
      .add("examples", layout.num_examples())
      .add("variables", layout.num_vars())
      .add("factors", layout.num_factors())
      .add("params", layout.num_params)
      .add("partition_imbalance",
           partition_imbalance(layout.cost, partition_by_cost(layout.cost, comm.size())))
      .add("seconds_load", o.seconds_load)
      .add("seconds_setup", seconds_setup);
  return line.str();
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
                              Communicator& comm, bool& requeue) {
  TrainConfig& config = o.config;
  std::unique_ptr<LocalProblem> problem;
  const auto setup_start = Clock::now();
  run_collectively(comm, [&] {
    problem = std::make_unique<LocalProblem>(
        slice, ProblemSettings{config.epsilon, config.counting, config.loss_weight, true,
                               config.data, config.kernels == "auto",
                               config.message_precision == "single" ? MessagePrecision::Single
                                                                    : MessagePrecision::Double});
    config.counting = problem->counting().mode;
  });
  const double seconds_setup = largest_over_ranks(seconds_since(setup_start), comm);
  if (comm.is_root())
    std::printf("kernels (rank 0): %s; set up in %.2f s\n", problem->kernel_name().c_str(),
                seconds_setup);

  Checkpoint identity;
  identity.config_line = config.to_line();
  identity.compatibility = config.trajectory_fields();
  if (!o.checkpoints.directory.empty() || !o.checkpoints.resume.empty())
    identity.data_fingerprint = dataset_fingerprint(slice, comm);
  const std::optional<Checkpoint> resumed =
      resume_training(o.checkpoints, identity, *problem, comm);

  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    log = std::make_unique<RunLog>(
        comm.is_root(), config.metrics, metadata_line(o, layout, seconds_setup, comm),
        resumed ? resumed->metrics_bytes : -1, resumed ? resumed->metrics_checksum : "");
  });
  CheckpointingObserver observer(*log, o.checkpoints, identity, comm);
  const TrainResult result =
      train(*problem, config, comm, observer, resumed ? resumed->state : TrainingState{});
  log->finish(result, largest_peak_memory(comm), observer.seconds_writing());
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
    if (!o.checkpoints.directory.empty() || !o.checkpoints.resume.empty())
      throw InputError("--learner " + config.learner +
                       ": checkpoints are for the primal-dual learner");
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
    log = std::make_unique<RunLog>(comm.is_root(), config.metrics,
                                   metadata_line(o, layout, seconds_setup, comm));
  });
  const TrainResult result = train_crf_baseline(*crf, baseline, comm, *log);
  log->finish(result, largest_peak_memory(comm), NAN);
  return result;
}

}  // namespace

int run_train(const std::vector<std::string>& args, Communicator& comm) {
  TrainOptions o;
  TrainConfig& config = o.config;
  Arguments flags("train",
                  "Learns the parameters of a CRF / structured SVM by primal-dual message passing\n"
                  "(Hazan & Urtasun 2010) and writes the model file.");
  declare_flags(flags, o);
  if (!parse_collectively(flags, args, comm)) return 0;
  run_collectively(comm, [&] {
    config.counting = parse_counting_mode(o.counting);
    config.validate();
    o.checkpoints.validate();
    check_outputs({config.out, config.metrics}, {config.data});
  });
  use_threads(config.threads);
  install_stop_signals(comm.is_root());

  const auto started = Clock::now();
  DatasetLayout layout;
  const Dataset slice = load_rank_slice(config.data, comm, &layout);
  o.seconds_load = largest_over_ranks(seconds_since(started), comm);
  if (comm.is_root())
    std::printf(
        "pdsp train: %lld examples, %lld variables, %lld factors, %lld parameters on "
        "%d rank(s) x %d thread(s), read in %.2f s\n%s\n",
        static_cast<long long>(layout.num_examples()), static_cast<long long>(layout.num_vars()),
        static_cast<long long>(layout.num_factors()), static_cast<long long>(layout.num_params),
        comm.size(), omp_get_max_threads(), o.seconds_load, config.to_line().c_str());

  const bool primal_dual = config.learner == "primal-dual";
  bool requeue = false;
  const TrainResult result = primal_dual ? train_primal_dual(slice, layout, o, comm, requeue)
                                         : train_baseline(slice, layout, o, comm);
  if (requeue) {
    if (comm.is_root())
      std::printf("checkpoint written to %s; run the same command to continue (exit %d)\n",
                  o.checkpoints.directory.c_str(), kExitRequeue);
    return kExitRequeue;
  }
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    // A baseline's model predicts with the learner's own inference, a CRF at eps = 1.
    TrainConfig recorded = config;
    if (!primal_dual) recorded.epsilon = 1.0;
    auto attributes = recorded.fields();
    if (!primal_dual)
      attributes.emplace_back("inference",
                              config.learner.rfind("lbp", 0) == 0 ? "lbp" : "mean-field");
    attributes.emplace_back("iterations", std::to_string(result.state.iterations_done));
    attributes.emplace_back("stop_reason", result.stop_reason);
    attributes.emplace_back("ranks", std::to_string(comm.size()));
    write_model(config.out, result.state.theta, attributes);
    std::printf("model written to %s (this process ran %.3f s)\n", config.out.c_str(),
                seconds_since(started));
  });
  // The stop reason is the same on every rank (it came through the allreduce); the local signal
  // flag is not.
  return result.stop_reason.find("signal") != std::string::npos ? kExitInterrupted : 0;
}

}  // namespace pdsp
