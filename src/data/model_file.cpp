#include "pdsp/data/model_file.hpp"

#include <cmath>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/util/counting_mode.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/temperature.hpp"

namespace pdsp {
void write_model(const std::string& path, const std::vector<double>& theta,
                 const Fields& attributes, const Provenance& provenance,
                 const std::vector<StoredEnsemble>& trees, const std::vector<double>& psi) {
  write_output(path, [&](const std::string& temporary) {
    h5::File file = h5::File::create(temporary);
    file.write_attribute("format", std::string(kModelFormat));
    file.write_attribute("format_version", kModelFormatVersion);
    file.write_attribute("num_params", static_cast<int64_t>(theta.size()));
    for (const auto& [name, value] : attributes)
      std::visit([&](const auto& typed) { file.write_attribute(name, typed); }, value);
    write_provenance(file, provenance);
    file.write("/theta", theta);
    write_ensembles(file, trees);
    if (!psi.empty()) file.write("/nonlocal/psi", psi);
  });
}

ModelFile read_model(const std::string& path) {
  const h5::File file = h5::File::open_read(path);
  const std::string format = file.read_string_attribute("format");
  if (format != kModelFormat)
    throw_file_error(path, "@format", "is '" + format + "', expected '" + kModelFormat + "'");
  if (file.read_int_attribute("format_version") != kModelFormatVersion)
    throw_file_error(path, "@format_version", "unknown model format version");
  ModelFile model;
  model.theta = file.read_all<double>("/theta");
  for (size_t r = 0; r < model.theta.size(); ++r)
    if (!std::isfinite(model.theta[r]))
      throw_file_error(path, "/theta", static_cast<int64_t>(r), "value is not finite");
  if (file.has_attribute("num_params") &&
      file.read_int_attribute("num_params") != static_cast<int64_t>(model.theta.size()))
    throw_file_error(path, "@num_params",
                     "is " + std::to_string(file.read_int_attribute("num_params")) +
                         ", but /theta has " + std::to_string(model.theta.size()) + " values");
  model.epsilon = file.read_double_attribute("epsilon");
  if (!is_valid_epsilon(model.epsilon))
    throw_file_error(
        path, "@epsilon",
        "is " + number_text(model.epsilon) + ", not a temperature (0 or a finite number >= 1e-12)");
  model.counting = file.read_string_attribute("counting");
  if (!counting_mode_named(model.counting))
    throw_file_error(path, "@counting",
                     "is '" + model.counting + "', not one of " + kCountingModeNames);
  if (file.has_attribute("inference")) model.inference = file.read_string_attribute("inference");
  if (file.has_attribute("unary_model"))
    model.unary_model = file.read_string_attribute("unary_model");
  if (file.has_attribute("pairwise_model"))
    model.pairwise_model = file.read_string_attribute("pairwise_model");
  if (file.has_attribute("hidden")) model.hidden = file.read_int_attribute("hidden");
  if (model.hidden < 1 || model.hidden > 4096)
    throw_file_error(path, "@hidden", "is " + std::to_string(model.hidden) + ", not in [1, 4096]");
  model.trees = read_ensembles(file);
  for (size_t e = 0; e < model.trees.size(); ++e) {
    const bool unary = model.trees[e].kind == "variables";
    if ((unary ? model.unary_model : model.pairwise_model) != "trees")
      throw_file_error(path, "/trees/index", static_cast<int64_t>(3 * e),
                       "an ensemble of " + model.trees[e].kind + ", but @" +
                           (unary ? "unary_model" : "pairwise_model") + " is not trees");
  }
  if (file.exists("/nonlocal/psi")) {
    model.psi = file.read_all<double>("/nonlocal/psi");
    // An empty array would read as "no weights" and predict without the terms unannounced.
    if (model.psi.empty())
      throw_file_error(path, "/nonlocal/psi",
                       "is empty; a model without non-local weights has no /nonlocal/psi");
    for (size_t w = 0; w < model.psi.size(); ++w)
      if (!std::isfinite(model.psi[w]) || model.psi[w] < 0)
        throw_file_error(path, "/nonlocal/psi", static_cast<int64_t>(w),
                         number_text(model.psi[w]) + " is not a weight (finite, >= 0)");
  }
  model.provenance = read_provenance(file);
  return model;
}

}  // namespace pdsp
