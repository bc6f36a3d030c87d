#pragma once
// The checkpoint directory: files ckpt-<iteration>.h5, a `latest` pointer naming the newest, and
// pruning to the K newest. Writes go through temporary names and renames, so a crash at any
// instant leaves every published checkpoint intact.
#include <string>
#include <vector>

namespace pdsp {

class CheckpointStore {
 public:
  CheckpointStore(std::string directory, int keep);

  const std::string& directory() const { return directory_; }
  std::string path_for(int iteration) const;
  // After a checkpoint file is in place: points `latest` at it and keeps it and the keep - 1
  // newest before it; later iterations (not this run's) are left alone. Call on one rank.
  void publish(const std::string& path) const;
  // Published checkpoints from the newest iteration down (what a resume tries, in order).
  std::vector<std::string> candidates() const;
  // The iteration in a checkpoint file name (-1 for any other name).
  static int iteration_of(const std::string& path);
  // Removes temporary files left by a process that was killed while writing. Call on one rank
  // before training starts.
  void remove_stale_temporaries() const;

 private:
  std::vector<std::pair<int, std::string>> published() const;  // (iteration, path), newest first
  std::string directory_;
  int keep_;
};

}  // namespace pdsp
