#include "pdsp/learning/stop_reason.hpp"

namespace pdsp {

StopReason final_stop_from_text(const std::string& text) {
  if (text.empty()) return no_stop();
  if (text.starts_with("converged")) return stop_converged(text);
  if (text == stop_time_limit().text) return stop_time_limit();
  return stop_small_change(text);
}

}  // namespace pdsp
