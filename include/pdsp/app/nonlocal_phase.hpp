#pragma once
// The part of `pdsp train` that learns the weights psi of the data's non-local terms after theta
// (learning/psi_fit.hpp): on --dev-data, or on the training set. The data are read and checked
// against the training set before training starts, so that a bad file stops the run at once.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/dataset_io.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/learners/learner.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/parallel/communicator.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {

class NonlocalPhase {
 public:
  // Whether psi is learned: the training set has non-local terms and --psi-epochs > 0 (a learner
  // without the trait is refused then; --dev-data without terms to weigh is refused). Reads the
  // data psi is learned on: --dev-data, or the training set again when its slice splits examples
  // (Bethe-RDA runs on whole examples). Collective; InputErrors name the file.
  NonlocalPhase(const TrainConfig& config, const LearnerEntry& learner, const Dataset& train_slice,
                const DatasetLayout& train_layout, Communicator& comm);
  bool active() const { return active_; }
  // Where psi is learned, for the console ("" when it is not).
  std::string describe() const;
  // Learns psi under the trained theta (and trees) with `config`'s settings, printing a line per
  // epoch on rank 0 when `print`. Returns the end record's fields. Collective.
  Fields fit(const TrainConfig& config, const std::vector<double>& theta,
             const std::vector<StoredEnsemble>& trees, bool print, Communicator& comm);
  // The learned weights (empty when inactive).
  const std::vector<double>& psi() const { return psi_; }

 private:
  bool active_ = false;
  std::string source_;             // the file psi is learned on
  std::optional<Dataset> own_;     // that file's slice, unless it is the training slice
  const Dataset* data_ = nullptr;  // the slice psi is learned on
  int64_t examples_ = 0;           // in the file
  std::vector<double> psi_;
};

}  // namespace pdsp
