// pdsp: distributed primal-dual structured prediction. main() owns MPI and turns every error into
// one clear line and an exit code: 0 success, 1 internal error, 2 bad input or usage.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "pdsp/app/commands.hpp"
#include "pdsp/data/errors.hpp"
#include "pdsp/parallel/mpi_communicator.hpp"

namespace {

constexpr const char* kUsage =
    "usage: pdsp <command> [flags]   (pdsp <command> --help for its flags)\n"
    "commands:\n"
    "  train     learn a model by primal-dual message passing\n"
    "  predict   predict labels and marginals with a model\n"
    "  info      validate a data set and print a summary\n"
    "  gen       generate a data set (gen denoise)\n";

int dispatch(const std::string& command, const std::vector<std::string>& args,
             pdsp::Communicator& comm) {
  if (command == "train") return pdsp::run_train(args, comm);
  if (command == "predict") return pdsp::run_predict(args, comm);
  if (command == "info") return pdsp::run_info(args, comm);
  if (command == "gen") return pdsp::run_gen(args, comm);
  if (command == "--help" || command == "-h" || command == "help") {
    if (comm.is_root()) std::fputs(kUsage, stdout);
    return 0;
  }
  if (comm.is_root())
    std::fprintf(stderr, "pdsp: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  pdsp::MpiCommunicator comm(&argc, &argv);
  if (argc < 2) {
    if (comm.is_root()) std::fputs(kUsage, stderr);
    return 2;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    return dispatch(argv[1], args, comm);
  } catch (const pdsp::CollectiveError& error) {
    // Every rank saw the failure; one prints it and all leave normally.
    if (error.reporter()) std::fprintf(stderr, "pdsp: error: %s\n", error.what());
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
