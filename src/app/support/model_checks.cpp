#include "pdsp/app/model_checks.hpp"

#include <algorithm>
#include <utility>

#include "pdsp/features/potential_models.hpp"
#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

void check_model_names(const ModelFile& model, const std::string& path) {
  for (const auto& [name, value] : {std::pair{"unary_model", model.unary_model},
                                    std::pair{"pairwise_model", model.pairwise_model}}) {
    const std::vector<std::string>& classes = function_class_names();
    if (std::find(classes.begin(), classes.end(), value) == classes.end())
      throw InputError(path + ": @" + name + ": is '" + value +
                       "', not a function class pdsp knows");
  }
  if (model.inference.empty()) return;
  try {
    parse_inference(model.inference);
  } catch (const InputError&) {
    throw InputError(path + ": @inference: is '" + model.inference + "', not one of " +
                     kApproximateInferenceNames);
  }
}

}  // namespace pdsp
