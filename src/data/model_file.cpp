#include "pdsp/data/model_file.hpp"

#include <cmath>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/data/errors.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/util/counting_mode.hpp"
#include "pdsp/util/temperature.hpp"

namespace pdsp {
namespace {

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

}  // namespace

void write_model(const std::string& path, const std::vector<double>& theta,
                 const std::vector<std::pair<std::string, std::string>>& attributes) {
  AtomicFile output(path);
  {
    h5::File file = h5::File::create(output.temporary_path());
    file.write_attribute("format", std::string(kModelFormat));
    file.write_attribute("format_version", kModelFormatVersion);
    file.write_attribute("num_params", static_cast<int64_t>(theta.size()));
    for (const auto& [name, text] : attributes) {
      double value = 0;
      if (parse_number(text, value))
        file.write_attribute(name, value);
      else
        file.write_attribute(name, text);
    }
    file.write("/theta", theta);
  }
  output.commit();
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
  return model;
}

}  // namespace pdsp
