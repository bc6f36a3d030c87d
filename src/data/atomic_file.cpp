#include "pdsp/data/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "pdsp/data/errors.hpp"

namespace pdsp {

AtomicFile::AtomicFile(std::string final_path, const std::string& tag)
    : final_(std::move(final_path)),
      temporary_(final_ + ".tmp." + (tag.empty() ? std::to_string(::getpid()) : tag)) {
  const auto parent = std::filesystem::path(final_).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw InputError(final_ + ": output directory does not exist");
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temporary_.c_str());
}

void AtomicFile::commit() {
  const int fd = ::open(temporary_.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (std::rename(temporary_.c_str(), final_.c_str()) != 0)
    throw InputError(final_ + ": cannot move the finished file into place");
  committed_ = true;
}

void refuse_to_overwrite_input(const std::string& output, const std::string& input) {
  std::error_code error;
  if (std::filesystem::exists(output) && std::filesystem::equivalent(output, input, error))
    throw InputError(output + ": output would overwrite the input file " + input);
}

void check_outputs(const std::vector<std::string>& outputs,
                   const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& output = outputs[i];
    if (output.empty()) continue;
    const auto parent = std::filesystem::path(output).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent))
      throw InputError(output + ": output directory does not exist");
    for (const std::string& input : inputs) refuse_to_overwrite_input(output, input);
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].empty() && std::filesystem::weakly_canonical(outputs[j]) ==
                                     std::filesystem::weakly_canonical(output))
        throw InputError(output + ": given for two different outputs");
  }
}

}  // namespace pdsp
