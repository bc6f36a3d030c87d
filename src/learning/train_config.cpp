#include "pdsp/learning/train_config.hpp"

#include <cmath>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

void require(bool ok, const std::string& flag, const std::string& rule) {
  if (!ok) throw InputError(flag + ": " + rule);
}

}  // namespace

void TrainConfig::validate() const {
  require(is_valid_epsilon(epsilon), "--epsilon", "must be 0 or a finite number >= 1e-12");
  require(is_valid_epsilon(smoothing_start) && smoothing_start > 0, "--smoothing-start",
          "must be a finite number >= 1e-12");
  require(std::isfinite(C) && C > 0, "--C", "must be a finite number > 0");
  require(std::isfinite(p) && p >= 1, "--p", "must be a finite number >= 1");
  require(std::isfinite(loss_weight) && loss_weight >= 0, "--loss-weight",
          "must be a finite number >= 0");
  require(sweeps >= 1, "--sweeps", "must be >= 1");
  require(max_iters >= 0, "--max-iters", "must be >= 0");
  require(std::isfinite(tol) && tol >= 0, "--tol",
          "must be a finite number >= 0 (0: never stop on it)");
  require(std::isfinite(max_seconds) && max_seconds >= 0, "--max-seconds", "must be >= 0");
  require(std::isfinite(initial_step) && initial_step > 0, "--step", "must be > 0");
  require(max_step_trials >= 1 && max_step_trials <= 200, "--max-step-trials",
          "must be in [1, 200] (each trial halves the step)");
  require(theta_step == "lbfgs" || theta_step == "gradient", "--theta-step",
          "must be lbfgs or gradient");
  require(lbfgs_memory >= 1 && lbfgs_memory <= 1000, "--lbfgs-memory", "must be in [1, 1000]");
  require(lbfgs_curvature == "auto" || lbfgs_curvature == "softmax" ||
              lbfgs_curvature == "kronecker" || lbfgs_curvature == "identity",
          "--lbfgs-curvature", "must be auto, softmax, kronecker or identity");
  require(threads >= 0, "--threads", "must be >= 0");
  require(kernels == "auto" || kernels == "general", "--kernels", "must be auto or general");
  require(message_precision == "double" || message_precision == "single", "--message-precision",
          "must be double or single");
  if (message_precision == "single")
    require(kernels == "auto", "--message-precision",
            "single needs --kernels auto (the general kernels keep double messages)");
  require(inference_sweeps >= 1, "--inference-sweeps", "must be >= 1");
  require(std::isfinite(inference_tol) && inference_tol >= 0, "--inference-tol", "must be >= 0");
}

Fields TrainConfig::fields() const {
  return {{"data", data},
          {"learner", learner},
          {"epsilon", epsilon},
          {"smoothing_start", smoothing_start},
          {"C", C},
          {"p", p},
          {"counting", counting_mode_name(counting)},
          {"loss_weight", loss_weight},
          {"sweeps", int64_t{sweeps}},
          {"max_iters", int64_t{max_iters}},
          {"tol", tol},
          {"max_seconds", max_seconds},
          {"step", initial_step},
          {"max_step_trials", int64_t{max_step_trials}},
          {"theta_step", theta_step},
          {"lbfgs_memory", int64_t{lbfgs_memory}},
          {"lbfgs_curvature", lbfgs_curvature},
          {"kernels", kernels},
          {"message_precision", message_precision},
          {"inference_sweeps", int64_t{inference_sweeps}},
          {"inference_tol", inference_tol}};
}

std::vector<std::pair<std::string, std::string>> TrainConfig::trajectory_fields() const {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& [field, value] : fields())
    for (const char* name :
         {"epsilon", "smoothing_start", "C", "p", "counting", "loss_weight", "sweeps",
          "max_step_trials", "theta_step", "lbfgs_memory", "lbfgs_curvature"})
      // The L-BFGS settings change nothing for the gradient step, the smoothing nothing at
      // eps > 0.
      if (field == name && (field.rfind("lbfgs_", 0) != 0 || theta_step == "lbfgs") &&
          (field != "smoothing_start" || epsilon == 0))
        kept.emplace_back(field, field_text(value));
  return kept;
}

std::string TrainConfig::to_line() const {
  std::string line;
  for (const auto& [name, value] : fields())
    line += (line.empty() ? "" : " ") + name + "=" + field_text(value);
  return line;
}

}  // namespace pdsp
