#pragma once
// Error types that the command line turns into exit codes (see src/app/main.cpp).
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pdsp {

// Bad input: a malformed file, an out-of-range value, an impossible flag. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Names the place of a problem in a file: "file.h5: /vars/card[12]: message".
[[noreturn]] void throw_file_error(const std::string& file, const std::string& dataset,
                                   int64_t index, const std::string& message);
[[noreturn]] void throw_file_error(const std::string& file, const std::string& dataset,
                                   const std::string& message);

// The shortest text that reads back as `value` ("1e-300", "inf", "nan"), for error messages.
std::string number_text(double value);

}  // namespace pdsp
