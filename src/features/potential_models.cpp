#include "pdsp/features/potential_models.hpp"

#include "pdsp/features/mlp_model.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

const std::vector<std::string>& function_class_names() {
  static const std::vector<std::string> names = {"linear", "mlp"};
  return names;
}

std::unique_ptr<const PotentialModel> make_potential_model(const Dataset& data,
                                                           const ModelChoice& choice) {
  if (choice.linear()) return nullptr;
  const auto require_types = [&](const std::string& flag, const std::string& name,
                                 const RegionTypes& types, const std::string& kind) {
    // Whether the file has the kind's types, not this slice: every rank decides alike.
    if (name != "linear" && !types.present)
      throw InputError(flag + " " + name + ": " + data.source() + " has no typed " + kind +
                       " (format 2's /" + (kind == "variables" ? "var" : "factor") +
                       "_types) for a network to read");
  };
  require_types("--unary-model", choice.unary, data.var_types, "variables");
  require_types("--pairwise-model", choice.pairwise, data.factor_types, "factors");
  MlpSettings settings;
  settings.replaced = {choice.unary == "mlp", choice.pairwise == "mlp"};
  settings.hidden = choice.hidden;
  settings.seed = choice.seed;
  return std::make_unique<MlpModel>(data, settings);
}

}  // namespace pdsp
