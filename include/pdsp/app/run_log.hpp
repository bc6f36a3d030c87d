#pragma once
// The rank-0 log line per iteration and the JSONL metrics file (first line: run metadata).
#include <fstream>
#include <string>

#include "pdsp/learning/trainer.hpp"

namespace pdsp {

class RunLog final : public TrainingObserver {
 public:
  // Only the root rank writes; `metadata` is the first line of the metrics file.
  RunLog(bool root, const std::string& metrics_path, const std::string& metadata);
  void on_iteration(const IterationRecord& record) override;
  void finish(const TrainResult& result);

 private:
  bool root_;
  std::ofstream metrics_;
};

}  // namespace pdsp
