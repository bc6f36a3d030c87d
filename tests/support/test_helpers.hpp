#pragma once
// Small helpers shared by the training tests.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "pdsp/learning/trainer.hpp"

namespace pdsp::testing {

// Keeps every iteration record of a training run.
class Recorder final : public TrainingObserver {
 public:
  void on_iteration(const IterationRecord& record) override { records.push_back(record); }
  std::vector<IterationRecord> records;
};

inline double max_abs_difference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace pdsp::testing
