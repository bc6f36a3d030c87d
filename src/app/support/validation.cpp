#include "pdsp/app/validation.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/prediction_file.hpp"
#include "pdsp/features/potential_models.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/learning/sweep_to_tolerance.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// The value of a model-file attribute the learner always writes.
template <class T>
T attribute(const Fields& fields, const std::string& name, T otherwise) {
  for (const auto& [key, value] : fields)
    if (key == name && std::holds_alternative<T>(value)) return std::get<T>(value);
  return otherwise;
}

// The owned variables whose predicted label (as pdsp predict writes it) is not their label.
double wrong_labels(const Dataset& data, std::span<const double> beliefs) {
  double wrong = 0;
  for (int64_t v = 0; v < data.owned_vars(); ++v)
    wrong += predicted_label(data, beliefs, v) != data.label[v];
  return wrong;
}

}  // namespace

ValidationSet::ValidationSet(const TrainConfig& config, const Fields& model,
                             const DatasetLayout& train_layout, Communicator& comm) {
  const std::string& path = config.validation;
  run_collectively(comm, [&] {
    for (const std::string& name : {config.unary_model, config.pairwise_model})
      if (name == "trees")
        throw InputError(
            "--validation: boosted-tree models are not checked on a validation "
            "set (their trees are not kept per iteration)");
  });
  DatasetLayout layout;
  slice_ = load_rank_slice(path, comm, &layout);
  examples_ = layout.num_examples();
  variables_ = layout.num_vars();
  checksum_ = dataset_checksum(slice_, comm);
  inference_ = attribute<std::string>(model, "inference", "message-passing");
  run_collectively(comm, [&] {
    if (layout.num_params != train_layout.num_params)
      throw InputError(path + ": @num_params is " + std::to_string(layout.num_params) +
                       ", but the training set " + config.data + " has " +
                       std::to_string(train_layout.num_params));
    if (!slice_.has_labels())
      throw InputError(path + ": /vars/label: a validation set needs labels");
    for (int64_t v = 0; v < slice_.owned_vars(); ++v)
      if (slice_.label[v] < 0)
        throw InputError(path + ": /vars/label[" + std::to_string(slice_.file_var(v)) +
                         "] is -1 (unobserved): a validation set needs every label");
    if (inference_ != "message-passing") return;
    ProblemSettings settings;
    settings.epsilon = attribute<double>(model, "epsilon", config.epsilon);
    settings.counting = parse_counting_mode(attribute<std::string>(model, "counting", "auto"));
    settings.loss_augmented = false;
    settings.shallow_trees_along = true;
    settings.source = path;
    ModelChoice choice = config.model_choice();
    choice.source = path;
    choice.standardize_inputs = false;  // scored at the model file's theta
    problem_ =
        std::make_unique<LocalProblem>(slice_, settings, make_potential_model(slice_, choice));
    problem_->keep_truth_moments();
  });
}

ValidationSet::~ValidationSet() = default;

ValidationSet::Score ValidationSet::score(std::span<const double> theta, Communicator& comm) {
  double sums[2] = {0, 0};  // wrong labels, smax - score(labels)
  const int sweeps = 1000;  // pdsp predict's defaults
  const double tol = 1e-9;
  if (problem_) {
    problem_->set_messages(
        std::vector<double>(static_cast<size_t>(problem_->num_message_entries()), 0.0));
    problem_->set_theta(theta);
    double change = 0;
    sweep_to_tolerance(*problem_, sweeps, tol, change, [](int, double) {});
    problem_->evaluate();
    sums[0] = wrong_labels(slice_, problem_->beliefs());
    sums[1] = problem_->objective() - problem_->ground_truth_score();
  } else {
    ApproximateCrf crf(slice_, parse_inference(inference_), sweeps, tol);
    crf.set_theta(theta);
    std::vector<int> chosen;
    const InferenceSummary summary = crf.infer_all_best_start(chosen, /*anneal=*/true);
    sums[0] = wrong_labels(slice_, crf.beliefs());
    sums[1] = summary.log_z;
    for (double score : crf.truth_scores()) sums[1] -= score;
  }
  comm.allreduce_sum(std::span<double>(sums));
  return {100.0 * sums[0] / static_cast<double>(variables_),
          sums[1] / static_cast<double>(examples_)};
}

ValidatingObserver::ValidatingObserver(TrainingObserver& inner, ValidationSet& set,
                                       ModelTheta model_theta, const TrainConfig& config,
                                       ValidationProgress resumed, Communicator& comm)
    : inner_(inner),
      set_(set),
      model_theta_(std::move(model_theta)),
      every_(config.validate_every),
      patience_(config.patience),
      comm_(comm),
      progress_(std::move(resumed)) {}

void ValidatingObserver::on_iteration(const IterationRecord& record) {
  flush();
  held_ = record;
}

void ValidatingObserver::flush() {
  if (held_) inner_.on_iteration(*held_);
  held_.reset();
}

StopReason ValidatingObserver::after_iteration(TrainingState& state, const IterationRecord& record,
                                               const StopReason& stopping) {
  IterationRecord logged = held_ ? *held_ : record;
  const bool was_held = held_.has_value();
  held_.reset();
  StopReason stop;
  const int iteration = state.iterations_done;
  // Every K iterations and at the end; a state already checked (a learner whose last step was
  // rejected reports the iteration before it again) is not checked twice.
  const bool due = (iteration % every_ == 0 || stopping.stops()) && iteration != last_checked_ &&
                   !(progress_.checks > 0 && iteration == progress_.best_iteration);
  if (due && !state.theta.empty()) {
    last_checked_ = iteration;
    const ValidationSet::Score score = set_.score(model_theta_(state.theta), comm_);
    logged.validation_error = score.error;
    logged.validation_loss = score.loss;
    progress_.checks += 1;
    if (score.error < progress_.best_error) {
      progress_.best_error = score.error;
      progress_.best_iteration = iteration;
      progress_.best_theta = state.theta;
      progress_.stale_checks = 0;
    } else {
      progress_.stale_checks += 1;
    }
    if (patience_ > 0 && progress_.stale_checks >= patience_ && !stopping.stops()) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "early stop: the validation error has not fallen in %d checks (best %.4f%% "
                    "after iteration %d)",
                    progress_.stale_checks, progress_.best_error, progress_.best_iteration);
      stop = stop_small_change(text);
    }
  }
  if (was_held) inner_.on_iteration(logged);
  // The checkpointing observer behind sees the state with this progress and stop, lent to it
  // (swapped, not copied: the progress holds the best theta) and taken back however it returns.
  struct Lent {
    TrainingState& state;
    ValidationProgress& progress;
    const StopReason learner_stop;
    ~Lent() {
      state.stop = learner_stop;
      std::swap(state.validation, progress);
    }
  } lent{state, progress_, state.stop};
  std::swap(state.validation, progress_);
  if (stop.is_final()) state.stop = stop;
  const StopReason inner_stop =
      inner_.after_iteration(state, logged, stop.stops() ? stop : stopping);
  return stop.stops() ? stop : inner_stop;
}

}  // namespace pdsp
