#include "pdsp/app/run_log.hpp"

#include <cstdio>
#include <filesystem>

#include "pdsp/app/json_line.hpp"
#include "pdsp/data/errors.hpp"

namespace pdsp {

RunLog::RunLog(bool root, const std::string& metrics_path, const std::string& metadata,
               int64_t resume_bytes)
    : root_(root) {
  if (!root_) return;
  std::printf("%5s %16s %16s %11s %9s %10s %9s %8s %10s\n", "iter", "F", "D", "gap", "viol",
              "|grad|", "step", "sec", "upd/s");
  if (metrics_path.empty()) return;
  std::error_code error;
  const bool continuing =
      resume_bytes >= 0 && std::filesystem::exists(metrics_path) &&
      std::filesystem::file_size(metrics_path, error) >= static_cast<uintmax_t>(resume_bytes);
  if (continuing) {
    std::filesystem::resize_file(metrics_path, static_cast<uintmax_t>(resume_bytes));
    metrics_.open(metrics_path, std::ios::app);
  } else {
    if (resume_bytes >= 0)
      std::printf(
          "metrics file %s is missing or shorter than at the checkpoint: starting it anew\n",
          metrics_path.c_str());
    metrics_.open(metrics_path);
  }
  if (!metrics_) throw InputError(metrics_path + ": cannot open metrics file for writing");
  if (!continuing) metrics_ << metadata << "\n";
}

void RunLog::on_iteration(const IterationRecord& r) {
  if (!root_) return;
  std::printf("%5d %16.9g %16.9g %11.4g %9.3g %10.4g %9.3g %8.4f %10.4g\n", r.iteration,
              r.objective, r.dual, r.gap, r.violation, r.grad_norm, r.step, r.seconds,
              r.message_updates_per_second);
  std::fflush(stdout);
  if (!metrics_.is_open()) return;
  metrics_ << JsonLine()
                  .add("type", "iteration")
                  .add("iteration", r.iteration)
                  .add("F", r.objective)
                  .add("D", r.dual)
                  .add("gap", r.gap)
                  .add("violation", r.violation)
                  .add("grad_norm", r.grad_norm)
                  .add("step", r.step)
                  .add("step_trials", r.step_trials)
                  .add("F_after_step", r.objective_after_step)
                  .add("seconds", r.seconds)
                  .add("elapsed", r.elapsed)
                  .add("message_updates_per_second", r.message_updates_per_second)
                  .add("seconds_messages", r.seconds_messages)
                  .add("seconds_gradient", r.seconds_gradient)
                  .add("seconds_allreduce", r.seconds_allreduce)
                  .add("seconds_step", r.seconds_step)
                  .str()
           << "\n";
  metrics_.flush();
}

void RunLog::finish(const TrainResult& result) {
  if (!root_) return;
  std::printf("stopped after %d iterations: %s (F = %.12g)\n", result.state.iterations_done,
              result.stop_reason.c_str(), result.objective);
  if (metrics_.is_open())
    metrics_ << JsonLine()
                    .add("type", "end")
                    .add("iterations", result.state.iterations_done)
                    .add("stop_reason", result.stop_reason)
                    .add("F", result.objective)
                    .str()
             << "\n";
}

}  // namespace pdsp
