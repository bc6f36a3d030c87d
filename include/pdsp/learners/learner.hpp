#pragma once
// A learner behind one interface, found by name (`--learner`): what it supports, which the train
// command checks before any data is read, and how it sets up on a rank's slice, runs with an
// observer, and describes its model. A learner never reads flags: it gets the TrainConfig the
// command filled. Adding one is a file beside its siblings in src/learners/ and one line in
// the list of src/learners/registry.cpp.
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/training_state.hpp"
#include "pdsp/parallel/communicator.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {

// What a learner supports; each restriction is refused centrally with one line naming the flag.
struct LearnerTraits {
  // --epsilon must lie in [epsilon_low, epsilon_high]; `epsilon_rule` completes the error line
  // ("--epsilon: --learner NAME <rule>").
  double epsilon_low = 0;
  double epsilon_high = std::numeric_limits<double>::infinity();
  std::string epsilon_rule;
  bool any_p = false;             // --p other than 2
  bool checkpoints = false;       // --checkpoint-dir, --resume
  bool split_examples = false;    // examples cut into shards over several ranks (--shards)
  bool single_precision = false;  // --message-precision single
  // Data of binary variables and pairwise factors only (checked on the slices, before set-up).
  bool binary_pairwise_only = false;
  // Nonlinear function classes (--unary-model, --pairwise-model other than linear).
  bool nonlinear_models = false;
  // A theta that message passing predicts with, under which the weights psi of the data's
  // non-local terms are learned after the run (learning/psi_fit.hpp).
  bool nonlocal_terms = false;
  // Training labels -1 (unobserved) allowed; every other learner refuses them.
  bool unobserved_labels = false;
  // The name of the objective in the metrics: "F" (the primal-dual objective, or F_0 for the
  // structured SVM) or what else the learner minimises.
  std::string objective = "F";
};

class Learner {
 public:
  virtual ~Learner() = default;
  // Builds this rank's state from its slice (which must outlive the learner) and checks that the
  // data suits the learner; may fill settings it resolves (the counting numbers of `auto`).
  // Collective: on failure every rank throws the lowest failing rank's one-line error.
  virtual void set_up(const Dataset& slice, TrainConfig& config, Communicator& comm) = 0;
  // One line for the console after set-up ("" for none); rank 0's.
  virtual std::string set_up_summary() const { return ""; }
  // The per-rank state that checkpoints store (learners whose traits allow checkpoints).
  virtual CheckpointedMessages* checkpointed() { return nullptr; }
  // Trains from `start` (a checkpoint's state, or a fresh one). Collective.
  virtual TrainResult run(TrainingObserver& observer, TrainingState start) = 0;
  // What only this learner has to say after its run: a console line ("" for none) and fields
  // of the metrics' end record. Collective.
  struct Summary {
    std::string line;
    Fields fields;
  };
  virtual Summary run_summary(Communicator& comm) {
    (void)comm;
    return {};
  }
  // The model file's attributes: the settings the model was trained and predicts with.
  virtual Fields model_attributes(const TrainConfig& config) const { return config.fields(); }
  // The boosted trees the model file stores beside theta (none unless a class is trees).
  virtual std::vector<StoredEnsemble> model_trees() const { return {}; }
  // theta as the model file stores it (PotentialModel::model_file_theta): what predict, the
  // validation set and the non-local terms' fit evaluate.
  virtual std::vector<double> model_theta(std::span<const double> theta) const {
    return {theta.begin(), theta.end()};
  }
};

struct LearnerEntry {
  std::string name;     // --learner NAME
  std::string summary;  // for --help
  LearnerTraits traits;
  std::function<std::unique_ptr<Learner>()> make;
};

// Every learner, in the order --help lists them; the first is the default.
const std::vector<LearnerEntry>& learner_registry();
std::vector<std::string> learner_names();
// The learner of that name; an InputError listing the names otherwise.
const LearnerEntry& find_learner(const std::string& name);

// The settings that a learner's traits refuse: an InputError naming the flag. `checkpoints`:
// a checkpoint directory or a resume was asked for. (Shards are the command's: a learner without
// split examples keeps them whole.)
void check_learner_settings(const LearnerEntry& learner, const TrainConfig& config,
                            bool checkpoints);
// The data kinds that a learner's traits refuse, on every rank's slice: an InputError naming the
// region. Collective.
void check_learner_data(const LearnerEntry& learner, const Dataset& slice, Communicator& comm);

}  // namespace pdsp
