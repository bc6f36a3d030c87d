#pragma once
// Checkpoint files: the whole training state in one HDF5 file. Root attributes hold the scalar
// state, the configuration, the identity of the training data and of the metrics file, all
// under one header checksum; /theta holds the parameters, /lbfgs the L-BFGS memory and /messages
// every message in global example order (so a run can resume on another rank count), each with
// its own checksum.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/provenance.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

inline constexpr const char* kCheckpointFormat = "pdsp-checkpoint";
// Version 2 added the L-BFGS memory (/lbfgs), version 3 the temperature of the eps = 0
// continuation (@smoothing) and its dual bundle; older files are still read (version 1 as
// written by the gradient step, with no memory; versions 1 and 2 at eps = 0 from
// --smoothing-start). The bundle's weights (/dual/weights) came later within version 3: a file
// without them holds a ring of recent points (dual_bundle.hpp, ring_bundle_in_order).
inline constexpr int64_t kCheckpointFormatVersion = 3;

struct Checkpoint {
  TrainingState state;
  int64_t metrics_bytes = -1;    // length of the metrics file after this iteration (-1: none)
  std::string metrics_checksum;  // checksum of those bytes (see RunLog)
  std::string config_line;       // TrainConfig::to_line() of the run that wrote it
  // Settings that change the trajectory (epsilon, C, ...): a resume must use the same values.
  std::vector<std::pair<std::string, std::string>> compatibility;
  std::string data_fingerprint;
  Provenance provenance;  // of the run that wrote it (not covered by the header checksum)
  // What the header says of the large vectors, which read_checkpoint_vectors reads and checks
  // against it: a resume looks at every candidate's header, but reads one theta and memory.
  int64_t num_params = 0;
  std::string theta_checksum, lbfgs_checksum;  // lbfgs_checksum empty: no memory (version 1)
};

// Where a rank's messages lie in /messages, which holds every message in file order: the runs
// this rank writes, and those it reads back (a shard of a split example also reads its halo's,
// which another shard writes). Contiguous slices in rank order have one run each.
struct MessageRuns {
  std::vector<ArrayRun> written, read;  // `file`: positions in /messages
  int64_t total = 0;                    // entries of /messages
};
// For `local_entries` messages of `slice` (a shard's per its ExampleShard). Collective.
MessageRuns message_runs(const Dataset& slice, int64_t local_entries, Communicator& comm);

// Writes `path` atomically (temporary file, fsync, rename). Rank 0 writes the header, theta and
// the rest of `state` (its own, with `identity`'s run fields: no copy of a large model's state);
// every rank writes its slice of the messages in turn, so no rank holds more than its own.
// Collective.
void write_checkpoint(const std::string& path, const Checkpoint& identity,
                      const TrainingState& state, const std::vector<double>& local_messages,
                      Communicator& comm, const MessageRuns& runs);
// The same for `checkpoint.state` and slices of whole examples (one run per rank, in rank order).
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint,
                      const std::vector<double>& local_messages, Communicator& comm);

// Reads and verifies the header of `path` on this rank alone: format, version, the header
// checksum over every attribute and the small state it covers; theta and the L-BFGS memory are
// left to read_checkpoint_vectors. Damage throws InputError.
Checkpoint read_checkpoint_file_header(const std::string& path);
// Reads theta and the L-BFGS memory of the header `c` into c.state and checks them against its
// checksums, the memory into storage for `memory_pairs` pairs (so that the trainer's memory
// need not grow by a copy). Damage throws InputError.
void read_checkpoint_vectors(const std::string& path, Checkpoint& c, int memory_pairs);
// Refuses a checkpoint whose theta does not fit data with `num_params` parameters.
void check_checkpoint_params(const std::string& path, const Checkpoint& c, int64_t num_params);
// The three above on every rank. Collective; a damaged file throws CollectiveError.
Checkpoint read_checkpoint_header(const std::string& path, int64_t num_params, Communicator& comm);

// Reads this rank's slice of the messages (`local_messages` is already sized to it) and
// verifies the checksum of the whole array. Collective; damage throws CollectiveError.
void read_checkpoint_messages(const std::string& path, std::vector<double>& local_messages,
                              Communicator& comm, const MessageRuns& runs);
void read_checkpoint_messages(const std::string& path, std::vector<double>& local_messages,
                              Communicator& comm);

}  // namespace pdsp
