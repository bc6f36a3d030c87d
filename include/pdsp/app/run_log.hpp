#pragma once
// The rank-0 log line per iteration and the JSONL metrics file (first line: run metadata).
#include <cstdint>
#include <fstream>
#include <string>

#include "pdsp/learning/trainer.hpp"

namespace pdsp {

class RunLog final : public TrainingObserver {
 public:
  // Only the root rank writes; `metadata` is the first line of the metrics file. With
  // `resume_bytes` >= 0 the existing file is cut back to that length (the end of the
  // checkpointed iteration's line) and continued, so no iteration appears twice or goes missing.
  RunLog(bool root, const std::string& metrics_path, const std::string& metadata,
         int64_t resume_bytes = -1);
  void on_iteration(const IterationRecord& record) override;
  void finish(const TrainResult& result);
  // Length of the metrics file so far (-1 without one); meaningful on the root rank.
  int64_t bytes() { return metrics_.is_open() ? static_cast<int64_t>(metrics_.tellp()) : -1; }

 private:
  bool root_;
  std::ofstream metrics_;
};

}  // namespace pdsp
