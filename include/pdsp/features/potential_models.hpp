#pragma once
// The function classes of the potentials, one per region kind (--unary-model, --pairwise-model),
// and the potential model they make on a data set: the names the flags take, and one line each
// in make_potential_model.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/features/potential_model.hpp"

namespace pdsp {

// "linear" (the data's features) and "mlp" (mlp_model.hpp), in the order --help lists them.
const std::vector<std::string>& function_class_names();

struct ModelChoice {
  std::string unary = "linear";     // the variables' typed regions
  std::string pairwise = "linear";  // the factors' typed regions
  int hidden = 16;                  // hidden units of each network
  uint64_t seed = 1;                // of a network's start
  bool linear() const { return unary == "linear" && pairwise == "linear"; }
};

// The model of `choice` on `data`: null for linear classes of both kinds (the inference engine
// then uses the data's features). A nonlinear class of a kind without typed regions is an
// InputError naming its flag and the data file.
std::unique_ptr<const PotentialModel> make_potential_model(const Dataset& data,
                                                           const ModelChoice& choice);

}  // namespace pdsp
