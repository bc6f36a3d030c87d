#include "pdsp/app/arguments.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <type_traits>

#include "pdsp/data/errors.hpp"

namespace pdsp {
namespace {

template <class T>
std::string text_of(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Parses all of `text` as a T; anything left over, out of range or NaN is an error.
template <class T>
T parse_whole(const std::string& flag, const std::string& text, const char* kind) {
  std::istringstream in(text);
  T value{};
  in >> value;
  const bool ok = !text.empty() && !in.fail() && in.eof() &&
                  !(std::is_floating_point_v<T> && std::isnan(static_cast<double>(value)));
  if (!ok) throw InputError(flag + ": '" + text + "' is not " + kind);
  return value;
}

}  // namespace

double parse_double(const std::string& flag, const std::string& text) {
  return parse_whole<double>(flag, text, "a number");
}

int parse_int(const std::string& flag, const std::string& text) {
  return parse_whole<int>(flag, text, "an integer");
}

Arguments::Arguments(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void Arguments::add(const std::string& flag, std::string* target, const std::string& help) {
  flags_.push_back({flag, help, *target, [target](const std::string& v) { *target = v; }});
}

void Arguments::add(const std::string& flag, double* target, const std::string& help) {
  flags_.push_back({flag, help, text_of(*target),
                    [target, flag](const std::string& v) { *target = parse_double(flag, v); }});
}

void Arguments::add(const std::string& flag, int* target, const std::string& help) {
  flags_.push_back({flag, help, text_of(*target),
                    [target, flag](const std::string& v) { *target = parse_int(flag, v); }});
}

void Arguments::required(const std::string& flag) {
  find(flag).required = true;
}

Arguments::Flag& Arguments::find(const std::string& flag) {
  for (Flag& f : flags_)
    if (f.name == flag) return f;
  throw InputError("pdsp " + command_ + ": unknown flag " + flag + " (see pdsp " + command_ +
                   " --help)");
}

bool Arguments::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") return false;
    std::string name = args[i];
    std::string value;
    const size_t equals = name.find('=');
    if (name.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    } else {
      if (name.rfind("--", 0) != 0)
        throw InputError("pdsp " + command_ + ": unexpected argument '" + name + "'");
      if (i + 1 >= args.size()) throw InputError(name + ": missing value");
      value = args[++i];
    }
    Flag& flag = find(name);
    flag.set(value);
    flag.seen = true;
  }
  for (const Flag& f : flags_)
    if (f.required && !f.seen)
      throw InputError("pdsp " + command_ + ": " + f.name + " is required");
  return true;
}

std::string Arguments::help() const {
  std::ostringstream out;
  out << "usage: pdsp " << command_ << " [flags]\n" << summary_ << "\n\nflags:\n";
  size_t width = 0;  // the longest flag name, so every description starts in one column
  for (const Flag& f : flags_) width = std::max(width, f.name.size());
  for (const Flag& f : flags_) {
    out << "  " << f.name;
    for (size_t pad = f.name.size(); pad < width + 2; ++pad) out << ' ';
    out << f.help;
    if (f.required)
      out << " (required)";
    else if (!f.default_text.empty())
      out << " (default " << f.default_text << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace pdsp
