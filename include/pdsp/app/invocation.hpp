#pragma once
// How this process was started (the command line, the time), and the provenance of a run that
// every output file and the metrics header record.
#include <string>
#include <vector>

#include "pdsp/data/provenance.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

struct Invocation {
  std::string command;            // the sub-command as typed: "train", "gen denoise"
  std::vector<std::string> args;  // the arguments after it
  std::string command_line;       // the whole command line, quoted for a POSIX shell
  std::string started_at;         // UTC, ISO 8601, when main() started

  // From main()'s arguments; `command_words` is how many words name the sub-command.
  static Invocation of(int argc, char** argv, int command_words);
};

// The provenance of this run: build, command line, every rank's host, ranks x threads, start
// time, the input data's fingerprint and the effective settings. Collective (host names travel
// to rank 0); only rank 0's copy has the hosts.
Provenance describe_run(const Invocation& invocation, const std::string& effective_config,
                        const std::string& data_fingerprint, Communicator& comm);

}  // namespace pdsp
