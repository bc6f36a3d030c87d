#pragma once
// Checkpointing of a training run: when to write (every N iterations, every S seconds, at the
// end, on a stop signal, before the wall-time limit), and resuming from the newest valid file.
#include <memory>
#include <optional>
#include <string>

#include "pdsp/app/run_log.hpp"
#include "pdsp/app/run_view.hpp"
#include "pdsp/data/checkpoint_store.hpp"
#include "pdsp/learning/checkpoint.hpp"
#include "pdsp/util/clock.hpp"

namespace pdsp {

// With a checkpoint directory but neither --checkpoint-every nor --checkpoint-seconds.
inline constexpr double kDefaultCheckpointSeconds = 300.0;

struct CheckpointOptions {
  std::string directory;    // empty: no checkpoints
  int every = 0;            // iterations between checkpoints (0: not by count)
  double seconds = 0;       // seconds between checkpoints (0: not by time)
  int keep = 2;             // checkpoints kept in the directory
  std::string resume;       // "", "auto" or a checkpoint path
  double max_walltime = 0;  // seconds this process may run (0: no limit)
  // Pairs the learner's L-BFGS memory keeps: a resumed memory is read into storage that size.
  int memory_pairs = 0;

  // Throws InputError naming the flag of an impossible combination.
  void validate() const;
  // Seconds between checkpoints by time (kDefaultCheckpointSeconds when no interval is given).
  double interval_seconds() const;
};

// Rank 0's look at the checkpoint directory: it must be usable as one (an InputError otherwise),
// its published checkpoints, and the header of each file a resume would try.
CheckpointView look_at_checkpoints(const CheckpointOptions& options);

// Loads the checkpoint to continue from, among those of `view` (rank 0's, shared with every
// rank), checks that it belongs to this data and these settings, and puts its messages into
// `problem`. Returns nothing for a fresh start. The view holds the candidates' headers only;
// every rank reads the chosen one's theta and L-BFGS memory from its file (a view that carried
// them held every candidate's in one message: 4.3 GB where a fresh run of the citations peaked
// at 2.1). The header returned is moved out of `view`, whose headers are released. Collective.
std::optional<Checkpoint> resume_training(const CheckpointOptions& options, CheckpointView& view,
                                          const Checkpoint& current, CheckpointedMessages& problem,
                                          Communicator& comm);
// The same, with rank 0 looking at the directory first.
std::optional<Checkpoint> resume_training(const CheckpointOptions& options,
                                          const Checkpoint& current, CheckpointedMessages& problem,
                                          Communicator& comm);

// The observer of a checkpointed run: logs through RunLog and writes checkpoints.
class CheckpointingObserver final : public TrainingObserver {
 public:
  // `identity` carries the configuration line, the trajectory settings and the data fingerprint
  // that every checkpoint of this run records.
  // `messages`: the learner's per-rank state that every checkpoint stores (it must outlive
  // the observer).
  CheckpointingObserver(RunLog& log, const CheckpointOptions& options, Checkpoint identity,
                        CheckpointedMessages& messages, Communicator& comm);

  void on_iteration(const IterationRecord& record) override;
  bool stop_requested() const override;
  StopReason after_iteration(TrainingState& state, const IterationRecord& record,
                             const StopReason& stopping) override;
  // True when the run stopped early with a checkpoint to continue from (exit kExitRequeue).
  bool requeue() const { return requeue_; }
  // Seconds spent writing checkpoints in this process.
  double seconds_writing() const { return total_write_seconds_; }

 private:
  // Writes and publishes a checkpoint. Returns why it failed (a warning is printed), or "".
  std::string write(const TrainingState& state);

  RunLog& log_;
  const CheckpointOptions& options_;
  Checkpoint identity_;
  CheckpointedMessages& messages_;
  Communicator& comm_;
  std::unique_ptr<CheckpointStore> store_;
  Clock::time_point last_write_ = Clock::now();
  double last_write_seconds_ = 0;
  double unlogged_write_seconds_ = 0;  // checkpoint writes since the last logged record
  double total_write_seconds_ = 0;
  int last_written_iteration_ = -1;
  bool requeue_ = false;
  bool failing_ = false;  // the last checkpoint write failed
};

}  // namespace pdsp
