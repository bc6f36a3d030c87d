#include "pdsp/learning/stop_reason.hpp"

namespace pdsp {

StopReason final_stop_from_text(const std::string& text) {
  if (text.empty()) return no_stop();
  if (text.starts_with("converged")) return stop_converged(text);
  if (text == stop_time_limit().text) return stop_time_limit();
  return stop_small_change(text);
}

StopReason limit_or_signal(Communicator& comm, bool signalled, double elapsed, double max_seconds,
                           int iteration, int max_iterations) {
  double largest[2] = {signalled ? 1.0 : 0.0, elapsed};
  comm.allreduce({}, largest);
  if (largest[0] > 0) return stop_signal();
  if (max_seconds > 0 && largest[1] >= max_seconds) return stop_time_limit();
  if (iteration >= max_iterations) return stop_iteration_limit();
  return no_stop();
}

}  // namespace pdsp
