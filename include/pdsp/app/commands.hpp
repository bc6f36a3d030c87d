#pragma once
// The sub-commands of the `pdsp` executable. Each parses its flags collectively, so a bad flag is
// reported once (by rank 0) and every rank exits with the same code.
#include <string>
#include <vector>

#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

int run_train(const std::vector<std::string>& args, Communicator& comm);
int run_predict(const std::vector<std::string>& args, Communicator& comm);
int run_info(const std::vector<std::string>& args, Communicator& comm);
int run_gen(const std::vector<std::string>& args, Communicator& comm);

// Parses `args` on every rank; returns false (after rank 0 printed the help) for --help.
class Arguments;
bool parse_collectively(Arguments& arguments, const std::vector<std::string>& args,
                        Communicator& comm);
// Sets the OpenMP thread count when `threads` > 0.
void use_threads(int threads);

}  // namespace pdsp
