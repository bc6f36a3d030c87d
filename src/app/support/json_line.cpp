#include "pdsp/app/json_line.hpp"

#include <cmath>
#include <cstdio>

namespace pdsp {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

void JsonLine::key(const std::string& name) {
  if (!body_.empty()) body_ += ",";
  body_ += quoted(name) + ":";
}

JsonLine& JsonLine::add(const std::string& name, const std::string& value) {
  key(name);
  body_ += quoted(value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& name, double value) {
  key(name);
  if (!std::isfinite(value)) {  // JSON has no inf/nan
    body_ += "null";
    return *this;
  }
  body_ += shortest_text(value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& name, int64_t value) {
  key(name);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& name, bool value) {
  key(name);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::add(const std::string& name, const FieldValue& value) {
  std::visit([&](const auto& typed) { add(name, typed); }, value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& name, const std::vector<std::string>& values) {
  key(name);
  body_ += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) body_ += ',';
    body_ += quoted(values[i]);
  }
  body_ += "]";
  return *this;
}

JsonLine& JsonLine::add(const Fields& fields) {
  for (const auto& [name, value] : fields) add(name, value);
  return *this;
}

}  // namespace pdsp
