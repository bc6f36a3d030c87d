#pragma once
// Checkpoint files: the whole training state in one HDF5 file. Root attributes hold the scalar
// state, the configuration and the identity of the training data; /theta holds the parameters
// and /messages every message in global example order, so a run can resume on another rank
// count. Each array carries a checksum (see Checksum) that is verified on load.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pdsp/learning/trainer.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

inline constexpr const char* kCheckpointFormat = "pdsp-checkpoint";
inline constexpr int64_t kCheckpointFormatVersion = 1;

struct Checkpoint {
  TrainingState state;
  int64_t metrics_bytes = -1;  // length of the metrics file after this iteration (-1: no file)
  std::string config_line;     // TrainConfig::to_line() of the run that wrote it
  // Settings that change the trajectory (epsilon, C, ...): a resume must use the same values.
  std::vector<std::pair<std::string, std::string>> compatibility;
  std::string data_fingerprint;
};

// Writes `path` atomically (temporary file, fsync, rename). Rank 0 writes the header and theta;
// every rank writes its slice of the messages in turn, so no rank holds more than its own.
// Collective.
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint,
                      const std::vector<double>& local_messages, Communicator& comm);

// Reads and verifies `path`: format, version, sizes and every checksum. Fills `local_messages`
// (already sized to this rank's part of the arena) with this rank's slice. Collective; any
// defect throws CollectiveError on every rank.
Checkpoint read_checkpoint(const std::string& path, std::vector<double>& local_messages,
                           int64_t num_params, Communicator& comm);

}  // namespace pdsp
