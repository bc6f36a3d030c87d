#include "pdsp/util/errors.hpp"

#include <charconv>

namespace pdsp {

void throw_file_error(const std::string& file, const std::string& dataset, int64_t index,
                      const std::string& message) {
  throw InputError(file + ": " + dataset + "[" + std::to_string(index) + "]: " + message);
}

void throw_file_error(const std::string& file, const std::string& dataset,
                      const std::string& message) {
  throw InputError(file + ": " + dataset + ": " + message);
}

std::string number_text(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

}  // namespace pdsp
