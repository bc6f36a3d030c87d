#pragma once
// Where an output came from: the program and commit that wrote it, the command line, the hosts,
// ranks x threads, when it started, the data it learnt from and every setting. Stored as root
// attributes of every file pdsp writes (model, prediction, checkpoint, data set) and as fields
// of the metrics header, so runs can be told apart long after.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {

struct Provenance {
  std::string version;             // pdsp's version, e.g. "0.1.0"
  std::string commit;              // git commit of the build ("-dirty" with local changes)
  std::string command_line;        // as typed, arguments quoted where the shell needs it
  std::vector<std::string> hosts;  // distinct host names, in rank order
  int64_t ranks = 1;
  int64_t threads = 1;           // OpenMP threads per rank
  std::string started_at;        // UTC, ISO 8601
  std::string data_fingerprint;  // the input data set's sizes and checksum ("" when none)
  std::string config;            // effective settings, `name=value` lines: --config re-runs them

  // The fields in a fixed order (hosts joined by spaces), as attributes and metrics name them.
  Fields fields() const;
};

void write_provenance(h5::File& file, const Provenance& provenance);
// Files written before provenance existed, or by other tools, have none: empty fields.
Provenance read_provenance(const h5::File& file);

}  // namespace pdsp
