#include "pdsp/app/process_clock.hpp"

#include <chrono>

namespace pdsp {
namespace {
// Initialised with the other statics, before main() and MPI start-up.
const std::chrono::steady_clock::time_point g_process_start = std::chrono::steady_clock::now();
}  // namespace

double seconds_since_process_start() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_process_start).count();
}

}  // namespace pdsp
