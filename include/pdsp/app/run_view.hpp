#pragma once
// Rank 0's view of a run's files, shared with every rank in one structured message
// (share_from_root): the config file's text and what the checkpoint directory held when rank 0
// looked. Ranks that listed a shared directory themselves could disagree about the newest
// checkpoint while another job (or a file system's caching) changes it.
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <string>
#include <vector>

#include "pdsp/learning/checkpoint.hpp"

namespace pdsp {

struct CheckpointView {
  std::vector<std::string> candidates;  // what a resume tries, in order (newest first)
  std::vector<Checkpoint> headers;      // each candidate's header and theta, when readable
  std::vector<std::string> damage;      // why a candidate's header is unreadable ("" if it is not)
  std::vector<int> iterations;          // every published checkpoint in the directory

  template <class Archive>
  void serialize(Archive& archive, unsigned) {
    archive& candidates& headers& damage& iterations;
  }
};

struct RunView {
  std::string config;  // the --config file's text ("" without one)
  CheckpointView checkpoints;

  template <class Archive>
  void serialize(Archive& archive, unsigned) {
    archive& config& checkpoints;
  }
};

}  // namespace pdsp

// Boost.Serialization of the checkpoint header, kept here so the learning layer stays free of
// Boost: it is only ever a message between ranks, never a file format.
namespace boost::serialization {

template <class Archive>
void serialize(Archive& archive, pdsp::LbfgsMemory& m, unsigned) {
  archive& m.s& m.y& m.oldest& m.curvatures& m.step& m.gradient;
}

template <class Archive>
void serialize(Archive& archive, pdsp::StopReason& s, unsigned) {
  archive& s.kind& s.text;
}

template <class Archive>
void serialize(Archive& archive, pdsp::TrainingState& s, unsigned) {
  archive& s.theta& s.step& s.previous_objective& s.iterations_done& s.seconds_trained& s.stop& s
      .lbfgs;
}

template <class Archive>
void serialize(Archive& archive, pdsp::Provenance& p, unsigned) {
  archive& p.version& p.commit& p.command_line& p.hosts& p.ranks& p.threads& p.started_at& p
      .data_fingerprint& p.config;
}

template <class Archive>
void serialize(Archive& archive, pdsp::Checkpoint& c, unsigned) {
  archive& c.state& c.metrics_bytes& c.metrics_checksum& c.config_line& c.compatibility& c
      .data_fingerprint& c.provenance& c.num_params& c.theta_checksum& c.lbfgs_checksum;
}

}  // namespace boost::serialization
