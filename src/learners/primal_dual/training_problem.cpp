// The LocalProblem the training learners run on: its settings (the trainer's temperature rule
// among them) and the potential model the flags choose.
#include "pdsp/features/potential_models.hpp"
#include "pdsp/learners/primal_dual/trainer.hpp"
#include "pdsp/optim/smoothing.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

ProblemSettings training_problem_settings(const TrainConfig& config) {
  ProblemSettings settings;
  settings.epsilon = config.epsilon;
  settings.counting = config.counting;
  settings.loss_weight = config.loss_weight;
  settings.loss_augmented = true;
  settings.source = config.data;
  settings.specialised_kernels = config.kernels == "auto";
  settings.message_precision =
      config.message_precision == "single" ? MessagePrecision::Single : MessagePrecision::Double;
  settings.smoothing = trains_by_smoothing(config.epsilon) ? config.smoothing_start : 0.0;
  return settings;
}

std::unique_ptr<LocalProblem> make_training_problem(const Dataset& slice, TrainConfig& config,
                                                    Communicator& comm, bool smoothed) {
  ProblemSettings settings = training_problem_settings(config);
  if (!smoothed) settings.smoothing = 0.0;
  std::unique_ptr<LocalProblem> problem;
  run_collectively(comm, [&] {
    problem = std::make_unique<LocalProblem>(slice, settings,
                                             make_potential_model(slice, config.model_choice()));
    config.counting = problem->counting().mode;
  });
  return problem;
}

void refuse_saddle_problem(const LocalProblem& problem, const TrainConfig& config,
                           Communicator& comm) {
  run_collectively(comm, [&] {
    if (problem.is_saddle_problem())
      throw InputError("--learner " + config.learner + ": counting numbers " +
                       counting_mode_name(config.counting) +
                       " make F non-convex in the messages at eps > 0; use --counting uniform");
  });
}

}  // namespace pdsp
