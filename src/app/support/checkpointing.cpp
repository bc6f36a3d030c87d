#include "pdsp/app/checkpointing.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "pdsp/app/process_clock.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/parallel/share_from_root.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Starts the message of a refusal (as opposed to damage, which a resume skips).
constexpr const char* kRefusal = "cannot resume: ";

// The settings a checkpoint was written with, with the values that builds before a setting
// existed implied: latent runs (inner_iters is theirs alone) completed at epsilon itself before
// --completion-epsilon, and networks read raw rows before --network-inputs.
std::vector<std::pair<std::string, std::string>> stored_settings(const Checkpoint& stored) {
  std::vector<std::pair<std::string, std::string>> settings = stored.compatibility;
  const auto value_of = [&](const std::string& name) -> const std::string* {
    for (const auto& [stored_name, value] : stored.compatibility)
      if (stored_name == name) return &value;
    return nullptr;
  };
  const std::string* epsilon = value_of("epsilon");
  if (value_of("inner_iters") && !value_of("completion_epsilon") && epsilon)
    settings.emplace_back("completion_epsilon", *epsilon);
  const auto is_mlp = [&](const char* name) {
    const std::string* value = value_of(name);
    return value && *value == "mlp";
  };
  if ((is_mlp("unary_model") || is_mlp("pairwise_model")) && !value_of("network_inputs"))
    settings.emplace_back("network_inputs", "raw");
  return settings;
}

// Refuses a checkpoint written for other data or with settings that change the trajectory;
// names the first field that differs.
void check_compatible(const std::string& path, const Checkpoint& stored, const Checkpoint& now) {
  if (stored.data_fingerprint != now.data_fingerprint)
    throw InputError(path + ": " + kRefusal + "written for other training data (checkpoint: " +
                     stored.data_fingerprint + "; now: " + now.data_fingerprint + ")");
  const std::vector<std::pair<std::string, std::string>> settings = stored_settings(stored);
  for (const auto& [name, value] : now.compatibility)
    for (const auto& [stored_name, stored_value] : settings)
      if (name == stored_name && value != stored_value)
        throw InputError(path + ": " + kRefusal + name + " was " + stored_value +
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
  StopReason& reason = loaded.state.stop;
  const char* setting = reason.kind == StopKind::TimeLimit ? "max_seconds" : "tol";
  if (reason.stops() &&
      field_of(loaded.config_line, setting) != field_of(current.config_line, setting))
    reason = no_stop();
}

// resume_training's choice: the first of the view's candidates that loads, its header moved out
// of the view.
std::optional<Checkpoint> choose_checkpoint(const CheckpointOptions& options, CheckpointView& view,
                                            const Checkpoint& current,
                                            CheckpointedMessages& problem, Communicator& comm) {
  if (options.resume.empty()) {
    // A fresh run would prune the checkpoints already in the directory: refuse to lose them.
    run_collectively(comm, [&] {
      if (!view.iterations.empty())
        throw InputError(options.directory +
                         ": holds checkpoints of an earlier run; pass --resume auto to continue "
                         "it, or choose another --checkpoint-dir");
    });
    return std::nullopt;
  }
  const bool automatic = options.resume == "auto";
  if (automatic && view.candidates.empty()) {
    if (comm.is_root())
      std::printf("no checkpoint in %s: starting afresh\n", options.directory.c_str());
    return std::nullopt;
  }

  // A damaged file is skipped for an older one (with --resume auto); a file of other data or
  // other settings is refused at once, by the setting's name (before the parameter count, which
  // a changed function class also changes).
  for (size_t i = 0; i < view.candidates.size(); ++i) {
    const std::string& path = view.candidates[i];
    const bool last_chance = !automatic || i + 1 == view.candidates.size();
    Checkpoint loaded;
    try {
      run_collectively(comm, [&] {
        if (!view.damage[i].empty()) throw InputError(view.damage[i]);
        loaded = std::move(view.headers[i]);
      });
      run_collectively(comm, [&] {
        check_compatible(path, loaded, current);
        check_checkpoint_params(path, loaded, problem.num_params());
      });
      // Every rank reads the one theta and memory it resumes with (the view carried headers).
      run_collectively(comm, [&] { read_checkpoint_vectors(path, loaded, options.memory_pairs); });
      std::vector<double> messages(static_cast<size_t>(problem.num_message_entries()));
      read_checkpoint_messages(path, messages, comm,
                               message_runs(problem.data(), problem.num_message_entries(), comm));
      problem.set_messages(messages);
    } catch (const CollectiveError& error) {
      const bool refused = std::string(error.what()).find(kRefusal) != std::string::npos;
      if (refused || last_chance) throw;
      if (error.reporter()) std::fprintf(stderr, "pdsp: skipping checkpoint: %s\n", error.what());
      continue;
    }
    // Continuing an older checkpoint in a directory that holds later ones would interleave two
    // runs' files (and pruning would remove the new ones): refuse, as for a fresh start.
    run_collectively(comm, [&] {
      for (const int iteration : view.iterations)
        if (!automatic && iteration > loaded.state.iterations_done)
          throw InputError(options.directory + ": holds checkpoints after iteration " +
                           std::to_string(loaded.state.iterations_done) + " of " + path +
                           "; resume into an empty --checkpoint-dir");
    });
    reopen_if_settings_changed(loaded, current);
    if (comm.is_root())
      std::printf("resuming from %s after iteration %d\n", path.c_str(),
                  loaded.state.iterations_done);
    return loaded;
  }
  return std::nullopt;
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

CheckpointView look_at_checkpoints(const CheckpointOptions& options) {
  CheckpointView view;
  if (!options.directory.empty()) {
    check_output_directory({"--checkpoint-dir", options.directory});
    if (std::filesystem::is_directory(options.directory)) {
      const CheckpointStore store(options.directory, options.keep);
      view.candidates = store.candidates();
      for (const std::string& path : view.candidates)
        view.iterations.push_back(CheckpointStore::iteration_of(path));
    }
  }
  if (options.resume.empty()) return view;
  if (options.resume != "auto") view.candidates = {options.resume};
  for (const std::string& path : view.candidates) {
    view.headers.emplace_back();
    view.damage.emplace_back();
    try {
      view.headers.back() = read_checkpoint_file_header(path);
    } catch (const InputError& error) {
      view.damage.back() = error.what();
    }
  }
  return view;
}

std::optional<Checkpoint> resume_training(const CheckpointOptions& options, CheckpointView& view,
                                          const Checkpoint& current, CheckpointedMessages& problem,
                                          Communicator& comm) {
  std::optional<Checkpoint> resumed = choose_checkpoint(options, view, current, problem, comm);
  view.headers.clear();
  return resumed;
}

std::optional<Checkpoint> resume_training(const CheckpointOptions& options,
                                          const Checkpoint& current, CheckpointedMessages& problem,
                                          Communicator& comm) {
  CheckpointView view = share_from_root<CheckpointView>(
      comm, [&](CheckpointView& v) { v = look_at_checkpoints(options); });
  return resume_training(options, view, current, problem, comm);
}

CheckpointingObserver::CheckpointingObserver(RunLog& log, const CheckpointOptions& options,
                                             Checkpoint identity, CheckpointedMessages& messages,
                                             Communicator& comm)
    : log_(log),
      options_(options),
      identity_(std::move(identity)),
      messages_(messages),
      comm_(comm) {
  if (options_.directory.empty()) return;
  run_collectively(comm_, [&] {
    store_ = std::make_unique<CheckpointStore>(options_.directory, options_.keep);
    if (comm_.is_root()) store_->remove_stale_temporaries();
  });
}

bool CheckpointingObserver::stop_requested() const {
  return stop_signal_received();
}

void CheckpointingObserver::on_iteration(const IterationRecord& record) {
  // A checkpoint is written after its iteration's record (it stores the metrics up to it), so
  // its time is reported with the next record.
  IterationRecord logged = record;
  logged.seconds_io = unlogged_write_seconds_;
  unlogged_write_seconds_ = 0;
  log_.on_iteration(logged);
}

std::string CheckpointingObserver::write(const TrainingState& state) {
  const auto start = Clock::now();
  // Only rank 0 knows the metrics file, and only rank 0 writes the header. The state is written
  // as it is: a copy of a large model's theta and L-BFGS memory would double the run's peak.
  identity_.metrics_bytes = log_.bytes();
  identity_.metrics_checksum = log_.checksum();
  const std::string path = store_->path_for(state.iterations_done);
  try {
    write_checkpoint(path, identity_, state, messages_.messages(), comm_,
                     message_runs(messages_.data(), messages_.num_message_entries(), comm_));
    run_collectively(comm_, [&] {
      if (comm_.is_root()) store_->publish(path);
    });
  } catch (const CollectiveError& error) {
    // A checkpoint that cannot be written (the disk full, the directory gone) must not end the
    // run and take the trained theta with it: training goes on, and the model is still written.
    // Failures in a row are reported once.
    if (error.reporter() && !failing_)
      std::fprintf(stderr,
                   "pdsp: warning: checkpoint of iteration %d not written: %s (training goes on; "
                   "failures are not reported again until a checkpoint is written)\n",
                   state.iterations_done, error.what());
    failing_ = true;
    last_write_ = Clock::now();
    return error.what();
  }
  failing_ = false;
  last_write_ = Clock::now();
  last_write_seconds_ = seconds_between(start, last_write_);
  unlogged_write_seconds_ += last_write_seconds_;
  total_write_seconds_ += last_write_seconds_;
  last_written_iteration_ = state.iterations_done;
  return "";
}

StopReason CheckpointingObserver::after_iteration(TrainingState& state,
                                                  const IterationRecord& record,
                                                  const StopReason& stopping) {
  if (!store_) return no_stop();
  // Time-based decisions use the slowest rank's clocks, so every rank decides alike.
  // Before the first write, assume 200 MB/s for the messages of all ranks written in turn.
  const double write_estimate =
      std::max(last_write_seconds_, static_cast<double>(messages_.num_message_entries()) *
                                        sizeof(double) * comm_.size() / 2e8);
  double clocks[3] = {seconds_between(last_write_, Clock::now()), seconds_since_process_start(),
                      record.seconds + write_estimate};
  if (options_.interval_seconds() > 0 || options_.max_walltime > 0) comm_.allreduce({}, clocks);

  StopReason stop;
  if (options_.max_walltime > 0 && !stopping.stops() &&
      clocks[1] + 2.0 * clocks[2] >= options_.max_walltime)
    stop = stop_by_observer("wall-time limit ahead: checkpointed to continue");
  const bool signalled = stopping.kind == StopKind::Signal;
  const bool due = stopping.stops() || stop.stops() ||
                   (options_.every > 0 && state.iterations_done % options_.every == 0) ||
                   (options_.interval_seconds() > 0 && clocks[0] >= options_.interval_seconds());
  const bool written =
      !(due && last_written_iteration_ != state.iterations_done) || write(state).empty();
  // Without a checkpoint to continue from, the run ends here and writes its model.
  if (!written && stop.stops())
    stop = stop_by_observer("wall-time limit ahead, and the checkpoint failed");
  requeue_ = written && (signalled || stop.stops());
  return stop;
}

}  // namespace pdsp
