#pragma once
// The function classes of the potentials, one per region kind (--unary-model, --pairwise-model),
// and the potential model they make on a data set: the names the flags take, and the model
// each choice makes (function_class_model.hpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/features/tree_ensemble.hpp"

namespace pdsp {

// "zero", "constant", "linear" (the data's features), "trees" and "mlp", in the order --help
// lists them.
const std::vector<std::string>& function_class_names();

struct ModelChoice {
  std::string unary = "linear";              // the variables' typed regions
  std::string pairwise = "linear";           // the factors' typed regions
  int hidden = 16;                           // hidden units of each network
  uint64_t seed = 1;                         // of a network's start
  TreeSettings trees;                        // how the trees grow
  std::vector<StoredEnsemble> stored_trees;  // trees grown before
  bool trees_from_file = false;              // stored_trees hold every ensemble the data needs
  std::string source;                        // the file they came from
  bool standardize_inputs = false;           // FunctionClasses::standardize_inputs
  bool linear() const { return unary == "linear" && pairwise == "linear"; }
};

// The model of `choice` on `data`: null for linear classes of both kinds (the inference engine
// then uses the data's features). A class other than linear of a kind without typed regions is
// an InputError naming its flag and the data file. Collective when a kind is trees or a network
// (every rank calls it).
std::unique_ptr<const PotentialModel> make_potential_model(const Dataset& data,
                                                           const ModelChoice& choice);

}  // namespace pdsp
