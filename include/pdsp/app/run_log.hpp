#pragma once
// The rank-0 log line per iteration and the JSONL metrics file (first line: run metadata).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "pdsp/data/checksum.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {

class RunLog final : public TrainingObserver {
 public:
  // Only the root rank writes, the iteration table on the console only with `table` (not with
  // --quiet); `metadata` is the first line of the metrics file. With
  // `resume_bytes` >= 0 the existing file is cut back to that length (the end of the
  // checkpointed iteration's line) and continued, so no iteration appears twice or goes missing.
  // `objective` names the objective in the metrics: "F" for the primal-dual learner, another
  // name for a learner that minimises another function (the likelihood baselines).
  RunLog(bool root, bool table, const std::string& metrics_path, const std::string& metadata,
         int64_t resume_bytes = -1, const std::string& resume_checksum = "",
         std::string objective = "F");
  void on_iteration(const IterationRecord& record) override;
  // SIGINT / SIGTERM (stop_signals.hpp), for learners without checkpoints.
  bool stop_requested() const override;
  // The summary line and the metrics file's last record; `peak_bytes` is the largest peak
  // resident memory of any rank.
  // `seconds_io`: checkpoint writing over the whole run, the last write included (NaN, null in
  // the metrics, when the run has no checkpoints).
  // `extra`: more fields of the end record (a split example's halo exchanges).
  void finish(const TrainResult& result, double peak_bytes, double seconds_io,
              const Fields& extra = {});
  // Length and checksum of the metrics file so far (-1 / "" without one); root rank only.
  int64_t bytes() const { return metrics_.is_open() ? bytes_ : -1; }
  std::string checksum() const { return metrics_.is_open() ? checksum_.hex() : ""; }

 private:
  void write_line(const std::string& json);
  // The console's line(s) of one iteration.
  void print_row(const IterationRecord& r);

  bool root_;
  bool table_;
  std::string objective_;
  double temperature_ = NAN;  // of the last iteration, to announce a change at eps = 0
  std::ofstream metrics_;
  int64_t bytes_ = 0;
  Checksum checksum_;
};

}  // namespace pdsp
