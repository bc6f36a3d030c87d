// pdsp: distributed primal-dual structured prediction. main() owns MPI, finds the sub-command and
// turns every error into one clear line and an exit code: 0 success, 1 internal error, 2 bad
// input or usage.
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>

#include "pdsp/app/build_info.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/parallel/mpi_communicator.hpp"
#include "pdsp/util/errors.hpp"

namespace {

std::string usage() {
  std::ostringstream out;
  out << "usage: pdsp <command> [flags] [--config FILE]   (pdsp <command> --help for its flags)\n"
         "       pdsp --version\ncommands:\n";
  for (const pdsp::CommandSpec& command : pdsp::command_table()) {
    out << "  " << command.name;
    for (size_t pad = command.name.size(); pad < 13; ++pad) out << ' ';
    out << command.summary << "\n";
  }
  return out.str();
}

// How many of argv's words name `name` ("gen denoise" is two), or 0 when they do not.
int matching_words(const std::string& name, int argc, char** argv) {
  std::istringstream words(name);
  int used = 0;
  for (std::string word; words >> word; ++used)
    if (1 + used >= argc || word != argv[1 + used]) return 0;
  return used;
}

int dispatch(int argc, char** argv, pdsp::Communicator& comm) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "--version") {
    if (comm.is_root()) std::fputs(pdsp::version_text(comm).c_str(), stdout);
    return 0;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    if (comm.is_root()) std::fputs(usage().c_str(), stdout);
    return 0;
  }
  for (const pdsp::CommandSpec& command : pdsp::command_table())
    if (const int words = matching_words(command.name, argc, argv); words > 0)
      return command.run(pdsp::Invocation::of(argc, argv, words), comm);
  if (comm.is_root()) {
    // A command of several words ("gen denoise") given only in part: name the ones that exist.
    std::string family;
    for (const pdsp::CommandSpec& command : pdsp::command_table())
      if (command.name.rfind(first + " ", 0) == 0)
        family += (family.empty() ? "" : ", ") + command.name;
    const std::string rest = argc > 2 ? std::string(" ") + argv[2] : "";
    if (first.empty())
      std::fputs(usage().c_str(), stderr);
    else if (!family.empty())
      std::fprintf(stderr, "pdsp: error: '%s%s' is not a command (known: %s)\n", first.c_str(),
                   rest.c_str(), family.c_str());
    else
      std::fprintf(stderr, "pdsp: error: unknown command '%s'\n%s", first.c_str(), usage().c_str());
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  pdsp::MpiCommunicator comm(&argc, &argv);
  try {
    return dispatch(argc, argv, comm);
  } catch (const pdsp::CollectiveError& error) {
    // Every rank saw the failure; one prints it and all leave normally.
    if (error.reporter()) std::fprintf(stderr, "pdsp: error: %s\n", error.what());
    pdsp::ignore_stop_signals();
    return 2;
  } catch (const pdsp::InputError& error) {
    // Found by this rank alone: the others may be waiting in a collective, so abort them all.
    std::fprintf(stderr, "pdsp: error (rank %d): %s\n", comm.rank(), error.what());
    std::fflush(stderr);
    comm.abort(2);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "pdsp: internal error (rank %d): %s\n", comm.rank(), error.what());
    std::fflush(stderr);
    comm.abort(1);
  }
}
