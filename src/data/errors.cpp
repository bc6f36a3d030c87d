#include "pdsp/data/errors.hpp"

namespace pdsp {

void throw_file_error(const std::string& file, const std::string& dataset, int64_t index,
                      const std::string& message) {
  throw InputError(file + ": " + dataset + "[" + std::to_string(index) + "]: " + message);
}

void throw_file_error(const std::string& file, const std::string& dataset,
                      const std::string& message) {
  throw InputError(file + ": " + dataset + ": " + message);
}

}  // namespace pdsp
