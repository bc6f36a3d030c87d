#include "pdsp/data/output_checks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void refuse(const NamedPath& output, const std::string& why) {
  throw InputError(output.flag + " " + output.path + ": " + why);
}

// Creating and removing a file is the only test that sees every reason a write would fail
// (permissions, read-only mounts, quotas, a full inode table); access() misses most of them.
void check_can_create_files_in(const NamedPath& output, const fs::path& directory) {
  std::string probe = (directory / ".pdsp-write-test.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    refuse(output,
           "cannot create files in " + directory.string() + " (" + std::strerror(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

fs::path directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

void refuse_to_overwrite_input(const std::string& output, const std::string& input) {
  std::error_code error;
  if (fs::exists(output) && fs::equivalent(output, input, error))
    throw InputError(output + ": output would overwrite the input file " + input);
}

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& output = outputs[i];
    if (output.path.empty()) continue;
    std::error_code error;
    const fs::file_status status = fs::status(output.path, error);
    if (fs::is_directory(status))
      refuse(output, "is a directory; give the name of the file to write");
    if (fs::exists(status) && !fs::is_regular_file(status))
      refuse(output, "exists and is not a regular file");
    const fs::path directory = directory_of(output.path);
    if (!fs::is_directory(directory))
      refuse(output, "directory " + directory.string() + " does not exist");
    check_can_create_files_in(output, directory);
    for (const NamedPath& input : inputs)
      if (!input.path.empty() && fs::exists(output.path) &&
          fs::equivalent(output.path, input.path, error))
        refuse(output, "is the input file of " + input.flag + "; pdsp never overwrites its input");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() &&
          fs::weakly_canonical(outputs[j].path, error) == fs::weakly_canonical(output.path, error))
        refuse(output, "is also given to " + outputs[j].flag);
  }
}

void check_output_directory(const NamedPath& directory) {
  if (directory.path.empty()) return;
  std::error_code error;
  fs::path existing = directory.path;
  while (!fs::exists(existing, error) && existing.has_parent_path() &&
         existing.parent_path() != existing)
    existing = existing.parent_path();
  if (existing.empty() || !fs::exists(existing, error)) existing = ".";
  if (!fs::is_directory(existing)) {
    if (existing == fs::path(directory.path)) refuse(directory, "is a file, not a directory");
    refuse(directory, existing.string() + " is a file, not a directory");
  }
  check_can_create_files_in(directory, existing);
}

}  // namespace pdsp
