#include "pdsp/features/potential_models.hpp"

#include <algorithm>

#include "pdsp/features/function_class_model.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

constexpr FunctionClass kClasses[] = {FunctionClass::Zero, FunctionClass::Constant,
                                      FunctionClass::Linear, FunctionClass::Trees,
                                      FunctionClass::Mlp};

FunctionClass class_named(const std::string& flag, const std::string& name) {
  for (FunctionClass c : kClasses)
    if (function_class_name(c) == name) return c;
  throw InputError(flag + " " + name + ": not a function class (one of zero, constant, linear, " +
                   "trees, mlp)");
}

}  // namespace

const std::vector<std::string>& function_class_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (FunctionClass c : kClasses) out.push_back(function_class_name(c));
    return out;
  }();
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
                       "_types) for the class to read");
  };
  require_types("--unary-model", choice.unary, data.var_types, "variables");
  require_types("--pairwise-model", choice.pairwise, data.factor_types, "factors");
  FunctionClasses classes;
  classes.unary = class_named("--unary-model", choice.unary);
  classes.pairwise = class_named("--pairwise-model", choice.pairwise);
  classes.hidden = choice.hidden;
  classes.seed = choice.seed;
  classes.trees = choice.trees;
  classes.stored_trees = choice.stored_trees;
  classes.trees_from_file = choice.trees_from_file;
  classes.source = choice.source;
  classes.standardize_inputs = choice.standardize_inputs;
  return std::make_unique<FunctionClassModel>(data, classes);
}

}  // namespace pdsp
