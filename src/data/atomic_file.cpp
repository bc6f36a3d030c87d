#include "pdsp/data/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace fs = std::filesystem;

AtomicFile::AtomicFile(std::string final_path, const std::string& tag)
    : final_(std::move(final_path)),
      temporary_(final_ + ".tmp." + (tag.empty() ? std::to_string(::getpid()) : tag)) {
  const auto parent = fs::path(final_).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    throw InputError(final_ + ": output directory does not exist");
}

AtomicFile::~AtomicFile() {
  if (!finished_) std::remove(temporary_.c_str());
}

void AtomicFile::commit() {
  const int fd = ::open(temporary_.c_str(), O_RDONLY);
  if (fd < 0) throw InputError(final_ + ": the finished file " + temporary_ + " disappeared");
  ::fsync(fd);
  ::close(fd);
  finished_ = true;
  if (std::rename(temporary_.c_str(), final_.c_str()) != 0)
    throw PublishError(final_ + ": cannot move the finished file into place (" +
                       std::strerror(errno) + "); it is kept as " + temporary_);
}

std::vector<std::string> rescue_paths(const std::string& path) {
  const std::string name =
      fs::path(path).filename().string() + ".rescued." + std::to_string(::getpid()) + ".h5";
  const char* tmpdir = std::getenv("TMPDIR");
  return {(fs::current_path() / name).string(),
          (fs::path(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") / name).string()};
}

void write_output(const std::string& path, const std::function<void(const std::string&)>& write) {
  std::string failure;
  try {
    AtomicFile output(path);
    write(output.temporary_path());
    output.commit();
    return;
  } catch (const PublishError&) {
    throw;  // finished, and kept under its temporary name: already safe
  } catch (const InputError& error) {
    failure = error.what();
  }
  for (const std::string& rescue : rescue_paths(path)) {
    try {
      AtomicFile copy(rescue);
      write(copy.temporary_path());
      copy.commit();
    } catch (const InputError&) {
      continue;
    }
    throw InputError(failure + "; the result was saved as " + rescue + " instead");
  }
  throw InputError(failure +
                   "; no rescue copy could be written either (working directory and "
                   "temporary directory failed too)");
}

}  // namespace pdsp
