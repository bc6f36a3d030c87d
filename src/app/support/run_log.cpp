#include "pdsp/app/run_log.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pdsp/app/json_line.hpp"
#include "pdsp/app/stop_signals.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

namespace {
constexpr uint64_t kMetricsTag = 201;

// The checksum RunLog keeps of its file: every byte at its position.
void add_bytes(Checksum& sum, int64_t first, const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i)
    sum.add_word(kMetricsTag, first + static_cast<int64_t>(i), static_cast<unsigned char>(text[i]));
}

// Whether the first `bytes` of the file at `path` are the ones a checkpoint recorded.
bool has_prefix(const std::string& path, int64_t bytes, const std::string& checksum,
                Checksum& sum) {
  std::error_code error;
  if (!std::filesystem::exists(path) ||
      std::filesystem::file_size(path, error) < static_cast<uintmax_t>(bytes))
    return false;
  std::ifstream in(path, std::ios::binary);
  std::string prefix(static_cast<size_t>(bytes), '\0');
  in.read(prefix.data(), bytes);
  add_bytes(sum, 0, prefix);
  return in && sum.hex() == checksum;
}

// A count, or null (NaN) where it is not measured (-1).
FieldValue count_or_null(int64_t count) {
  return count < 0 ? FieldValue(NAN) : FieldValue(count);
}
}  // namespace

RunLog::RunLog(bool root, bool table, const std::string& metrics_path, const std::string& metadata,
               int64_t resume_bytes, const std::string& resume_checksum, std::string objective)
    : root_(root), table_(table), objective_(std::move(objective)) {
  if (!root_) return;
  if (table_)
    std::printf("%5s %16s %16s %11s %9s %10s %9s %8s %10s\n", "iter", "F", "D", "gap", "viol",
                "|grad|", "step", "sec", "upd/s");
  if (metrics_path.empty()) return;
  // Continue the file only when it still starts with what the checkpoint recorded; a different
  // or shorter file (another run's, or one cut short) is not spliced into.
  const bool continuing =
      resume_bytes >= 0 && has_prefix(metrics_path, resume_bytes, resume_checksum, checksum_);
  if (continuing) {
    std::filesystem::resize_file(metrics_path, static_cast<uintmax_t>(resume_bytes));
    metrics_.open(metrics_path, std::ios::app);
    bytes_ = resume_bytes;
  } else {
    checksum_ = Checksum();
    if (resume_bytes >= 0)
      std::printf("metrics file %s does not hold the checkpointed run's lines: starting it anew\n",
                  metrics_path.c_str());
    metrics_.open(metrics_path);
  }
  if (!metrics_) throw InputError(metrics_path + ": cannot open metrics file for writing");
  if (!continuing) write_line(metadata);
}

void RunLog::write_line(const std::string& json) {
  const std::string line = json + "\n";
  add_bytes(checksum_, bytes_, line);
  bytes_ += static_cast<int64_t>(line.size());
  // One write per line, flushed: a crash leaves whole lines (a resume cuts back to its own).
  metrics_ << line << std::flush;
}

void RunLog::print_row(const IterationRecord& r) {
  // At eps = 0 the table's F is F at the smoothing temperature, D the eps = 0 dual and gap the
  // certificate: a line says which temperature the rows below ran at.
  if (!std::isnan(r.smoothed_gap) && r.temperature != temperature_)
    std::printf("eps = 0: training at temperature %.3g\n", r.temperature);
  temperature_ = r.temperature;
  // "-": the iteration evaluated the messages its predecessor's step search had swept (forests
  // with Bethe numbers), and swept none of its own before the gradient.
  char throughput[16] = "-";
  if (r.message_updates_per_second > 0)
    std::snprintf(throughput, sizeof throughput, "%.4g", r.message_updates_per_second);
  std::printf("%5d %16.9g %16.9g %11.4g %9.3g %10.4g %9.3g %8.4f %10s\n", r.iteration, r.objective,
              r.dual, r.gap, r.violation, r.grad_norm, r.step, r.seconds, throughput);
  if (r.negative_nll_examples > 0)
    std::printf(
        "      %lld example(s) with a negative approximate NLL (lowest %.6g): inference "
        "sits at a poor fixed point there\n",
        static_cast<long long>(r.negative_nll_examples), r.lowest_nll);
  if (!std::isnan(r.validation_error))
    std::printf("      validation: error %.4f%%, loss %.6g\n", r.validation_error,
                r.validation_loss);
  std::fflush(stdout);
}

bool RunLog::stop_requested() const {
  return stop_signal_received();
}

void RunLog::on_iteration(const IterationRecord& r) {
  if (!root_) return;
  if (table_) print_row(r);
  if (!metrics_.is_open()) return;
  JsonLine line;
  line.add("type", "iteration")
      .add("iteration", r.iteration)
      .add(objective_, r.objective)
      .add("D", r.dual)
      .add("gap", r.gap)
      .add("gap_certified", r.gap_certified)
      .add("temperature", r.temperature)
      .add("smoothed_gap", r.smoothed_gap)
      .add("violation", r.violation)
      .add("grad_norm", r.grad_norm)
      .add("step", r.step)
      .add("step_trials", r.step_trials);
  // The baselines search no direction of their own: null, not a made-up value.
  if (r.direction.empty())
    line.add("direction", NAN).add("lbfgs_pairs", NAN);
  else
    line.add("direction", r.direction).add("lbfgs_pairs", r.lbfgs_pairs);
  write_line(line.add(objective_ + "_after_step", r.objective_after_step)
                 .add("seconds", r.seconds)
                 .add("elapsed", r.elapsed)
                 .add("message_updates_per_second", r.message_updates_per_second)
                 .add("seconds_messages", r.seconds_messages)
                 .add("seconds_gradient", r.seconds_gradient)
                 .add("seconds_allreduce", r.seconds_allreduce)
                 .add("seconds_step", r.seconds_step)
                 .add("seconds_io", r.seconds_io)
                 .add("load_imbalance", r.load_imbalance)
                 .add("unconverged_examples", count_or_null(r.unconverged_examples))
                 .add("negative_nll_examples", count_or_null(r.negative_nll_examples))
                 .add("lowest_nll", r.lowest_nll)
                 .add("all_start_searches", count_or_null(r.all_start_searches))
                 .add("validation_error", r.validation_error)
                 .add("validation_loss", r.validation_loss)
                 .str());
}

void RunLog::finish(const TrainResult& result, double peak_bytes, double seconds_io,
                    const Fields& extra) {
  if (!root_) return;
  std::printf("stopped after %d iterations: %s (F = %.12g); peak memory %.1f MiB per rank\n",
              result.state.iterations_done, result.stop.text.c_str(), result.objective,
              peak_bytes / (1 << 20));
  if (metrics_.is_open())
    write_line(JsonLine()
                   .add("type", "end")
                   .add("iterations", result.state.iterations_done)
                   .add("stop_reason", result.stop.text)
                   .add(objective_, result.objective)
                   .add("peak_resident_bytes", peak_bytes)
                   .add("seconds_io", seconds_io)
                   .add(extra)
                   .str());
}

}  // namespace pdsp
