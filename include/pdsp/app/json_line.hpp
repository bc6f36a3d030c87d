#pragma once
// Builds one JSON object on one line (the JSONL metrics file): numbers as JSON numbers in the
// shortest text that reads back to the same double, non-finite numbers as null.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/util/field.hpp"

namespace pdsp {

class JsonLine {
 public:
  JsonLine& add(const std::string& key, const std::string& value);
  JsonLine& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, int64_t value);
  JsonLine& add(const std::string& key, int value) { return add(key, int64_t{value}); }
  JsonLine& add(const std::string& key, bool value);
  JsonLine& add(const std::string& key, const FieldValue& value);
  JsonLine& add(const std::string& key, const std::vector<std::string>& values);
  JsonLine& add(const Fields& fields);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(const std::string& name);
  std::string body_;
};

}  // namespace pdsp
