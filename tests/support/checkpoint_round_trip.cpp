#include "support/checkpoint_round_trip.hpp"

#include <unistd.h>

#include <filesystem>

#include "pdsp/learning/checkpoint.hpp"

namespace pdsp::testing {

StopReason Snapshot::after_iteration(TrainingState& now, const IterationRecord&,
                                     const StopReason&) {
  if (now.iterations_done == at_) {
    state = now;
    messages = problem_->messages();
  }
  return no_stop();
}

std::pair<TrainingState, std::vector<double>> through_checkpoint(const Snapshot& snapshot,
                                                                 int64_t num_params) {
  SerialCommunicator serial;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pdsp-resume-test-" + std::to_string(::getpid()) + ".h5"))
                               .string();
  Checkpoint written;
  written.state = snapshot.state;
  write_checkpoint(path, written, snapshot.messages, serial);
  std::vector<double> messages(snapshot.messages.size());
  const Checkpoint read = read_checkpoint_header(path, num_params, serial);
  read_checkpoint_messages(path, messages, serial);
  std::filesystem::remove(path);
  return {read.state, messages};
}

std::pair<TrainResult, std::vector<IterationRecord>> resume(const Dataset& data,
                                                            const ProblemSettings& settings,
                                                            const TrainConfig& config,
                                                            const TrainingState& state,
                                                            const std::vector<double>& messages) {
  SerialCommunicator serial;
  LocalProblem problem(data, settings);
  problem.set_messages(messages);
  Snapshot records(-1);
  TrainResult result = train(problem, config, serial, records, state);
  return {std::move(result), std::move(records.records)};
}

}  // namespace pdsp::testing
