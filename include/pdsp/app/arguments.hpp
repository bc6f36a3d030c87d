#pragma once
// A small `--flag value` parser: every command declares its flags with a help line and a
// target; unknown flags, missing values and malformed numbers are InputErrors naming the flag.
#include <functional>
#include <string>
#include <vector>

namespace pdsp {

// Whole-string number parsing for flag values; an InputError names the flag otherwise.
double parse_double(const std::string& flag, const std::string& text);
int parse_int(const std::string& flag, const std::string& text);

class Arguments {
 public:
  Arguments(std::string command, std::string summary);

  void add(const std::string& flag, std::string* target, const std::string& help);
  void add(const std::string& flag, double* target, const std::string& help);
  void add(const std::string& flag, int* target, const std::string& help);
  void required(const std::string& flag);

  // Returns false when --help was given (the help text is then printed by the caller).
  bool parse(const std::vector<std::string>& args);
  std::string help() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    std::function<void(const std::string&)> set;
    bool required = false;
    bool seen = false;
  };
  Flag& find(const std::string& flag);
  std::string command_;
  std::string summary_;
  std::vector<Flag> flags_;
};

}  // namespace pdsp
