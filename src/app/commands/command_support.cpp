#include <omp.h>

#include <cstdio>

#include "pdsp/app/arguments.hpp"
#include "pdsp/app/commands.hpp"

namespace pdsp {

bool parse_collectively(Arguments& arguments, const std::vector<std::string>& args,
                        Communicator& comm) {
  bool proceed = true;
  run_collectively(comm, [&] { proceed = arguments.parse(args); });
  if (!proceed && comm.is_root()) std::fputs(arguments.help().c_str(), stdout);
  return proceed;
}

void use_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

}  // namespace pdsp
