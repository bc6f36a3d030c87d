#include "pdsp/app/invocation.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "pdsp/app/build_info.hpp"

namespace pdsp {
namespace {

// Quotes `word` for a POSIX shell when it holds anything but plain characters, so the recorded
// command line can be pasted back.
std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string("-_./=,:+@%").find(c) != std::string::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace

Invocation Invocation::of(int argc, char** argv, int command_words) {
  Invocation invocation;
  invocation.started_at = utc_now();
  for (int i = 0; i < argc; ++i) {
    if (i > 0) invocation.command_line.push_back(' ');
    invocation.command_line.append(shell_quoted(argv[i]));
    if (i > 1 && i <= command_words) invocation.command.push_back(' ');
    if (i >= 1 && i <= command_words)
      invocation.command.append(argv[i]);
    else if (i > command_words)
      invocation.args.emplace_back(argv[i]);
  }
  return invocation;
}

Provenance describe_run(const Invocation& invocation, const std::string& effective_config,
                        const std::string& data_fingerprint, Communicator& comm) {
  Provenance p;
  p.version = kVersion;
  p.commit = kCommit;
  p.command_line = invocation.command_line;
  for (const std::string& host : comm.gather_to_root(host_name()))
    if (std::find(p.hosts.begin(), p.hosts.end(), host) == p.hosts.end()) p.hosts.push_back(host);
  p.ranks = comm.size();
  p.threads = omp_get_max_threads();
  p.started_at = invocation.started_at;
  p.data_fingerprint = data_fingerprint;
  p.config = effective_config;
  return p;
}

}  // namespace pdsp
