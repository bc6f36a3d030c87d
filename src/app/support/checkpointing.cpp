#include "pdsp/app/checkpointing.hpp"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "pdsp/app/stop_signals.hpp"
#include "pdsp/data/errors.hpp"

namespace pdsp {
namespace {

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Refuses a checkpoint written for other data or with settings that change the trajectory;
// names the first field that differs.
void check_compatible(const std::string& path, const Checkpoint& stored, const Checkpoint& now) {
  if (stored.data_fingerprint != now.data_fingerprint)
    throw InputError(path + ": written for other training data (checkpoint: " +
                     stored.data_fingerprint + "; now: " + now.data_fingerprint + ")");
  for (const auto& [name, value] : now.compatibility)
    for (const auto& [stored_name, stored_value] : stored.compatibility)
      if (name == stored_name && value != stored_value)
        throw InputError(path + ": " + name + " was " + stored_value +
                         " in the checkpoint and is " + value + " now; resume with the same " +
                         name + " or start afresh");
}

// The value of `name` in a TrainConfig::to_line() text ("" when absent).
std::string field_of(const std::string& line, const std::string& name) {
  std::istringstream fields(line);
  std::string field;
  while (fields >> field)
    if (field.rfind(name + "=", 0) == 0) return field.substr(name.size() + 1);
  return "";
}

// A run that had converged stays finished unless the setting that ended it changed.
void reopen_if_settings_changed(Checkpoint& loaded, const Checkpoint& current) {
  std::string& reason = loaded.state.stop_reason;
  const char* setting = reason == "time limit" ? "max_seconds" : "tol";
  if (!reason.empty() &&
      field_of(loaded.config_line, setting) != field_of(current.config_line, setting))
    reason.clear();
}

}  // namespace

void CheckpointOptions::validate() const {
  if (every < 0) throw InputError("--checkpoint-every: must be >= 0");
  if (!(seconds >= 0)) throw InputError("--checkpoint-seconds: must be >= 0");
  if (keep < 1) throw InputError("--keep-checkpoints: must be >= 1");
  if (!(max_walltime >= 0)) throw InputError("--max-walltime: must be >= 0");
  if (directory.empty() && (every > 0 || seconds > 0 || max_walltime > 0 || resume == "auto"))
    throw InputError(
        "--checkpoint-every, --checkpoint-seconds, --max-walltime and --resume auto "
        "need --checkpoint-dir");
}

double CheckpointOptions::interval_seconds() const {
  return every == 0 && seconds == 0 ? kDefaultCheckpointSeconds : seconds;
}

std::optional<Checkpoint> resume_training(const CheckpointOptions& options,
                                          const Checkpoint& current, LocalProblem& problem,
                                          Communicator& comm) {
  std::vector<std::string> candidates;
  if (options.resume == "auto") {
    candidates = CheckpointStore(options.directory, options.keep).candidates();
    if (candidates.empty()) {
      if (comm.is_root())
        std::printf("no checkpoint in %s: starting afresh\n", options.directory.c_str());
      return std::nullopt;
    }
  } else if (!options.resume.empty()) {
    candidates = {options.resume};
  } else {
    // A fresh run would prune the checkpoints already in the directory: refuse to lose them.
    run_collectively(comm, [&] {
      if (!options.directory.empty() &&
          !CheckpointStore(options.directory, options.keep).candidates().empty())
        throw InputError(options.directory +
                         ": holds checkpoints of an earlier run; pass --resume auto to continue "
                         "it, or choose another --checkpoint-dir");
    });
    return std::nullopt;
  }

  // A damaged or unreadable file is skipped for an older one (with --resume auto).
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::optional<Checkpoint> loaded;
    try {
      loaded = read_checkpoint(candidates[i], problem.messages(), problem.num_params(), comm);
    } catch (const CollectiveError& error) {
      if (options.resume != "auto" || i + 1 == candidates.size()) throw;
      if (error.reporter()) std::fprintf(stderr, "pdsp: skipping checkpoint: %s\n", error.what());
      continue;
    }
    // A checkpoint of other data or other settings is refused, not skipped.
    run_collectively(comm, [&] { check_compatible(candidates[i], *loaded, current); });
    reopen_if_settings_changed(*loaded, current);
    if (comm.is_root())
      std::printf("resuming from %s after iteration %d\n", candidates[i].c_str(),
                  loaded->state.iterations_done);
    return loaded;
  }
  return std::nullopt;
}

CheckpointingObserver::CheckpointingObserver(RunLog& log, const CheckpointOptions& options,
                                             Checkpoint identity, Communicator& comm)
    : log_(log), options_(options), identity_(std::move(identity)), comm_(comm) {
  if (options_.directory.empty()) return;
  run_collectively(comm_, [&] {
    store_ = std::make_unique<CheckpointStore>(options_.directory, options_.keep);
    if (comm_.is_root()) store_->remove_stale_temporaries();
  });
}

bool CheckpointingObserver::stop_requested() const {
  return stop_signal_received();
}

void CheckpointingObserver::write(const TrainingState& state, LocalProblem& problem) {
  const auto start = Clock::now();
  Checkpoint checkpoint = identity_;
  checkpoint.state = state;
  // Only rank 0 knows the metrics file's length; the others contribute zero.
  int64_t bytes[1] = {comm_.is_root() ? log_.bytes() : 0};
  comm_.allreduce_sum(std::span<int64_t>(bytes));
  checkpoint.metrics_bytes = bytes[0];
  const std::string path = store_->path_for(state.iterations_done);
  write_checkpoint(path, checkpoint, problem.messages(), comm_);
  run_collectively(comm_, [&] {
    if (comm_.is_root()) store_->publish(path);
  });
  last_write_ = Clock::now();
  last_write_seconds_ = seconds_between(start, last_write_);
  last_written_iteration_ = state.iterations_done;
}

std::string CheckpointingObserver::after_iteration(const TrainingState& state,
                                                   LocalProblem& problem,
                                                   const IterationRecord& record,
                                                   const std::string& stopping) {
  if (!store_) return "";
  // Time-based decisions use the slowest rank's clocks, so every rank decides alike.
  double clocks[3] = {seconds_between(last_write_, Clock::now()),
                      seconds_between(started_, Clock::now()),
                      record.seconds + last_write_seconds_};
  if (options_.interval_seconds() > 0 || options_.max_walltime > 0) comm_.allreduce({}, clocks);

  std::string stop;
  if (options_.max_walltime > 0 && stopping.empty() &&
      clocks[1] + 2.0 * clocks[2] >= options_.max_walltime)
    stop = "wall-time limit ahead: checkpointed to continue";
  const bool signalled = stopping.find("signal") != std::string::npos;
  const bool due = !stopping.empty() || !stop.empty() ||
                   (options_.every > 0 && state.iterations_done % options_.every == 0) ||
                   (options_.interval_seconds() > 0 && clocks[0] >= options_.interval_seconds());
  if (due && last_written_iteration_ != state.iterations_done) write(state, problem);
  requeue_ = signalled || !stop.empty();
  return stop;
}

}  // namespace pdsp
