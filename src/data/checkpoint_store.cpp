#include "pdsp/data/checkpoint_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pdsp/data/atomic_file.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace fs = std::filesystem;

namespace {
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".h5";

int name_iteration(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return -1;
  return std::stoi(digits);
}
}  // namespace

int CheckpointStore::iteration_of(const std::string& path) {
  return name_iteration(fs::path(path).filename().string());
}

CheckpointStore::CheckpointStore(std::string directory, int keep)
    : directory_(std::move(directory)), keep_(keep) {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (!fs::is_directory(directory_))
    throw InputError(directory_ + ": cannot create the checkpoint directory");
}

std::string CheckpointStore::path_for(int iteration) const {
  char name[32];
  std::snprintf(name, sizeof name, "%s%09d%s", kPrefix, iteration, kSuffix);
  return (fs::path(directory_) / name).string();
}

std::vector<std::pair<int, std::string>> CheckpointStore::published() const {
  std::vector<std::pair<int, std::string>> found;
  try {
    for (const auto& entry : fs::directory_iterator(directory_)) {
      const int iteration = iteration_of(entry.path().string());
      if (iteration >= 0) found.emplace_back(iteration, entry.path().string());
    }
  } catch (const fs::filesystem_error& error) {  // removed or unreadable during the run
    throw InputError(directory_ + ": cannot list the checkpoint directory (" +
                     error.code().message() + ")");
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

void CheckpointStore::publish(const std::string& path) const {
  const std::string latest = (fs::path(directory_) / "latest").string();
  {
    AtomicFile pointer(latest);
    std::ofstream(pointer.temporary_path()) << fs::path(path).filename().string() << "\n";
    pointer.commit();
  }
  const int current = iteration_of(path);
  int kept = 1;  // the one just published
  for (const auto& [iteration, other] : published())
    if (iteration < current && ++kept > keep_) {
      std::error_code ignored;  // a checkpoint left over is pruned at the next write
      fs::remove(other, ignored);
    }
}

std::vector<std::string> CheckpointStore::candidates() const {
  std::vector<std::string> order;
  for (const auto& [iteration, path] : published()) order.push_back(path);
  return order;
}

void CheckpointStore::remove_stale_temporaries() const {
  for (const auto& entry : fs::directory_iterator(directory_)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp.") != std::string::npos &&
        (name.rfind(kPrefix, 0) == 0 || name.rfind("latest", 0) == 0))
      fs::remove(entry.path());
  }
}

}  // namespace pdsp
