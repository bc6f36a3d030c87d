#pragma once
// What the resume tests share: an observer that keeps the state and messages after one chosen
// iteration, the round trip of that state through a checkpoint file, as a resume reads it, and
// the comparison of the resumed records with the uninterrupted run's.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/learning/local_problem.hpp"

namespace pdsp::testing {

class Snapshot final : public TrainingObserver {
 public:
  // at < 0: keep only the records; else the state and `problem`'s messages after iteration `at`.
  explicit Snapshot(int at, const LocalProblem* problem = nullptr) : at_(at), problem_(problem) {}
  void on_iteration(const IterationRecord& record) override { records.push_back(record); }
  StopReason after_iteration(TrainingState& now, const IterationRecord&,
                             const StopReason&) override;
  std::vector<IterationRecord> records;
  TrainingState state;
  std::vector<double> messages;

 private:
  int at_;
  const LocalProblem* problem_;
};

// Writes the snapshot's state and messages to a temporary checkpoint file and reads them back.
std::pair<TrainingState, std::vector<double>> through_checkpoint(const Snapshot& snapshot,
                                                                 int64_t num_params);

// Trains on from `state` and `messages` (those of through_checkpoint, possibly altered), as a
// resumed run does; returns the result and every record.
std::pair<TrainResult, std::vector<IterationRecord>> resume(const Dataset& data,
                                                            const ProblemSettings& settings,
                                                            const TrainConfig& config,
                                                            const TrainingState& state,
                                                            const std::vector<double>& messages);

// Each record of the resumed run has the same `fields` (a tuple of the record's values, such as
// std::tie(r.objective, r.step)) as the uninterrupted run's record of that iteration.
template <class Fields>
void expect_same_continuation(const std::vector<IterationRecord>& uninterrupted,
                              const std::vector<IterationRecord>& resumed, Fields fields) {
  for (const IterationRecord& b : resumed)
    EXPECT_EQ(fields(uninterrupted[b.iteration - 1]), fields(b)) << "iteration " << b.iteration;
}

}  // namespace pdsp::testing
