#include "pdsp/app/process_clock.hpp"

#include "pdsp/util/clock.hpp"

namespace pdsp {
namespace {
// Initialised with the other statics, before main() and MPI start-up.
const Clock::time_point g_process_start = Clock::now();
}  // namespace

double seconds_since_process_start() {
  return seconds_since(g_process_start);
}

}  // namespace pdsp
