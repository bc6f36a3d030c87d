#pragma once
// pdsp train --validation VAL.h5 --validate-every K --patience P: the model is checked on a
// labelled data set while it trains (every K iterations and after the last), the check's error
// and loss go in the log and the metrics, the model written is the checked theta with the lowest
// error, and training stops after P checks without a lower one. The validation examples are
// partitioned over the ranks like the training set.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// The validation data on this rank and how a theta is scored on it: labels by the arg-max of
// the beliefs at the model's own temperature, counting numbers and inference (as pdsp predict
// runs it, each check from zero messages), and the loss smax_eps(scores) - score(labels) per
// example (the negative log-likelihood at eps = 1).
class ValidationSet {
 public:
  // Reads and checks VAL.h5 (parameters as the training set's, every label observed) before
  // training starts. `model` are the learner's model-file attributes (epsilon, counting,
  // inference). Collective; InputErrors name the file.
  ValidationSet(const TrainConfig& config, const Fields& model, const DatasetLayout& train_layout,
                Communicator& comm);
  ~ValidationSet();
  struct Score {
    double error = 0;  // % of the validation variables
    double loss = 0;   // per example
  };
  // theta as a model file holds it (the full layout, not the trained parameters alone).
  Score score(std::span<const double> theta, Communicator& comm);
  int64_t examples() const { return examples_; }
  // dataset_fingerprint.hpp's checksum of the data (one word, as a checkpoint's settings hold
  // it): ties a checkpoint's checks to the file.
  const std::string& checksum() const { return checksum_; }

 private:
  Dataset slice_;
  std::string checksum_;
  int64_t examples_ = 0;
  int64_t variables_ = 0;
  std::string inference_;  // "message-passing", else the likelihood baselines' own
  std::unique_ptr<LocalProblem> problem_;
};

// Holds each iteration's record until the learner's after_iteration, checks the validation set
// when due, puts the check into the record, and then passes both on to `inner` (the run log, or
// the checkpointing observer around it), with the best so far in the state a checkpoint keeps.
class ValidatingObserver final : public TrainingObserver {
 public:
  // `model_theta` turns the learner's theta into the model file's for the checks.
  using ModelTheta = std::function<std::vector<double>(std::span<const double>)>;
  ValidatingObserver(TrainingObserver& inner, ValidationSet& set, ModelTheta model_theta,
                     const TrainConfig& config, ValidationProgress resumed, Communicator& comm);
  void on_iteration(const IterationRecord& record) override;
  bool stop_requested() const override { return inner_.stop_requested(); }
  StopReason after_iteration(TrainingState& state, const IterationRecord& record,
                             const StopReason& stopping) override;
  // Passes on a record still held (a learner that ended without an after_iteration for it).
  void flush();
  const ValidationProgress& progress() const { return progress_; }

 private:
  TrainingObserver& inner_;
  ValidationSet& set_;
  ModelTheta model_theta_;
  int every_;
  int patience_;
  Communicator& comm_;
  ValidationProgress progress_;
  int last_checked_ = -1;  // the iteration of this process's last check
  std::optional<IterationRecord> held_;
};

}  // namespace pdsp
