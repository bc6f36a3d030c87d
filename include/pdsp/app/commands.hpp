#pragma once
// The sub-commands of the `pdsp` executable. Each parses its flags collectively, so a bad flag is
// reported once (by rank 0) and every rank exits with the same code.
#include <string>
#include <vector>

#include "pdsp/app/invocation.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

int run_train(const Invocation& invocation, Communicator& comm);
int run_predict(const Invocation& invocation, Communicator& comm);
int run_info(const Invocation& invocation, Communicator& comm);
int run_gen_denoise(const Invocation& invocation, Communicator& comm);
int run_gen_domke(const Invocation& invocation, Communicator& comm);
int run_gen_chain(const Invocation& invocation, Communicator& comm);

struct CommandSpec {
  std::string name;  // as typed, one or more words: "train", "gen denoise"
  std::string summary;
  int (*run)(const Invocation&, Communicator&);
};
// Every sub-command, in the order `pdsp --help` lists them.
const std::vector<CommandSpec>& command_table();

// Sets the OpenMP thread count when `threads` > 0.
void use_threads(int threads);

}  // namespace pdsp
