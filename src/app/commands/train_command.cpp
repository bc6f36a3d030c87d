#include <omp.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "pdsp/app/arguments.hpp"
#include "pdsp/app/checkpointing.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/json_line.hpp"
#include "pdsp/app/run_log.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/learning/trainer.hpp"

namespace pdsp {
namespace {

std::string metadata_line(const TrainConfig& config, const DatasetLayout& layout,
                          Communicator& comm) {
  JsonLine line;
  line.add("type", "run").add("program", "pdsp train");
  for (const auto& [name, value] : config.fields()) line.add(name, value);
  line.add("ranks", comm.size())
      .add("threads", omp_get_max_threads())
      .add("examples", layout.num_examples())
      .add("variables", layout.num_vars())
      .add("factors", layout.num_factors())
      .add("params", layout.num_params);
  return line.str();
}

}  // namespace

int run_train(const std::vector<std::string>& args, Communicator& comm) {
  TrainConfig config;
  std::string counting = "auto";
  Arguments flags("train",
                  "Learns the parameters of a CRF / structured SVM by primal-dual message passing\n"
                  "(Hazan & Urtasun 2010) and writes the model file.");
  flags.add("--data", &config.data, "training data set (pdsp-dataset HDF5)");
  flags.add("--out", &config.out, "model file to write (HDF5)");
  flags.add("--epsilon", &config.epsilon, "entropy temperature: 1 = CRF, 0 = structured SVM");
  flags.add("--C", &config.C, "regularisation weight");
  flags.add("--p", &config.p, "regulariser norm (C/p) |theta|_p^p, p >= 1");
  flags.add("--counting", &counting, "counting numbers: auto | file | uniform | bethe");
  flags.add("--loss-weight", &config.loss_weight, "scale of the loss augmentation e_v(s)");
  flags.add("--sweeps", &config.sweeps, "message sweeps per outer iteration");
  flags.add("--max-iters", &config.max_iters, "maximum outer iterations");
  flags.add("--tol", &config.tol, "stop when the relative decrease of F (or the gap) is below");
  flags.add("--max-seconds", &config.max_seconds, "stop after this wall time (0: no limit)");
  flags.add("--step", &config.initial_step, "first step size of the Armijo search");
  flags.add("--max-step-trials", &config.max_step_trials, "objective evaluations per step search");
  flags.add("--threads", &config.threads, "OpenMP threads per rank (0: OMP_NUM_THREADS)");
  flags.add("--metrics", &config.metrics, "JSONL metrics file (first line: run metadata)");
  CheckpointOptions checkpoints;
  flags.add("--checkpoint-dir", &checkpoints.directory, "directory for checkpoints");
  flags.add("--checkpoint-every", &checkpoints.every, "checkpoint every N iterations (0: off)");
  flags.add("--checkpoint-seconds", &checkpoints.seconds,
            "checkpoint every S seconds (default 300 when no interval is given)");
  flags.add("--keep-checkpoints", &checkpoints.keep, "checkpoints kept in the directory");
  flags.add("--resume", &checkpoints.resume,
            "auto (newest valid checkpoint of --checkpoint-dir, or a fresh start) or a file");
  flags.add("--max-walltime", &checkpoints.max_walltime,
            "seconds this job may run: checkpoint and exit 75 before the limit (0: none)");
  flags.required("--data");
  flags.required("--out");
  if (!parse_collectively(flags, args, comm)) return 0;
  run_collectively(comm, [&] {
    config.counting = parse_counting_mode(counting);
    config.validate();
    checkpoints.validate();
    check_outputs({config.out, config.metrics}, {config.data});
  });
  use_threads(config.threads);
  install_stop_signals(comm.is_root());

  const auto started = std::chrono::steady_clock::now();
  DatasetLayout layout;
  const Dataset slice = load_rank_slice(config.data, comm, &layout);
  if (comm.is_root())
    std::printf(
        "pdsp train: %lld examples, %lld variables, %lld factors, %lld parameters on "
        "%d rank(s) x %d thread(s)\n%s\n",
        static_cast<long long>(layout.num_examples()), static_cast<long long>(layout.num_vars()),
        static_cast<long long>(layout.num_factors()), static_cast<long long>(layout.num_params),
        comm.size(), omp_get_max_threads(), config.to_line().c_str());
  std::unique_ptr<LocalProblem> problem;
  run_collectively(comm, [&] {
    problem = std::make_unique<LocalProblem>(
        slice,
        ProblemSettings{config.epsilon, config.counting, config.loss_weight, true, config.data});
    config.counting = problem->counting().mode;
  });

  Checkpoint identity;
  identity.config_line = config.to_line();
  identity.compatibility = config.trajectory_fields();
  const bool checkpointing = !checkpoints.directory.empty() || !checkpoints.resume.empty();
  if (checkpointing) identity.data_fingerprint = dataset_fingerprint(slice, comm);
  const std::optional<Checkpoint> resumed = resume_training(checkpoints, identity, *problem, comm);

  std::unique_ptr<RunLog> log;
  run_collectively(comm, [&] {
    log = std::make_unique<RunLog>(comm.is_root(), config.metrics,
                                   metadata_line(config, layout, comm),
                                   resumed ? resumed->metrics_bytes : -1);
  });
  CheckpointingObserver observer(*log, checkpoints, identity, comm);
  const TrainResult result =
      train(*problem, config, comm, observer, resumed ? resumed->state : TrainingState{});
  log->finish(result);
  if (observer.requeue()) {
    if (comm.is_root())
      std::printf("checkpoint written to %s; run the same command to continue (exit %d)\n",
                  checkpoints.directory.c_str(), kExitRequeue);
    return kExitRequeue;
  }
  run_collectively(comm, [&] {
    if (!comm.is_root()) return;
    auto attributes = config.fields();
    attributes.emplace_back("iterations", std::to_string(result.state.iterations_done));
    attributes.emplace_back("stop_reason", result.stop_reason);
    attributes.emplace_back("ranks", std::to_string(comm.size()));
    write_model(config.out, result.state.theta, attributes);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("model written to %s (this process ran %.3f s)\n", config.out.c_str(), seconds);
  });
  // The stop reason is the same on every rank (it came through the allreduce); the local signal
  // flag is not.
  return result.stop_reason.find("signal") != std::string::npos ? kExitInterrupted : 0;
}

}  // namespace pdsp
