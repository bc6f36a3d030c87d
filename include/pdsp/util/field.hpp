#pragma once
// A named setting or measurement with its type kept (text, real or integer): the one form in
// which settings reach the log line, the JSONL metrics and the HDF5 attributes of every output.
#include <charconv>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pdsp {

using FieldValue = std::variant<std::string, double, int64_t>;
using Fields = std::vector<std::pair<std::string, FieldValue>>;

// The shortest text that reads back to the same double.
inline std::string shortest_text(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

inline std::string field_text(const FieldValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  if (const auto* real = std::get_if<double>(&value)) return shortest_text(*real);
  return std::to_string(std::get<int64_t>(value));
}

}  // namespace pdsp
