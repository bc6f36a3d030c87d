#pragma once
// Writes an output file under a temporary name in the same directory and renames it into place
// only when complete, so a crash never leaves a half-written file where the user's was. What
// was computed is never thrown away: a finished file that cannot be moved into place stays
// under its temporary name, and write_output falls back to a rescue copy elsewhere.
#include <functional>
#include <string>
#include <vector>

#include "pdsp/util/errors.hpp"

namespace pdsp {

// A finished output that could not be renamed into place; it is kept under its temporary name,
// which the message gives.
class PublishError : public InputError {
 public:
  using InputError::InputError;
};

class AtomicFile {
 public:
  // The temporary file is `final_path.tmp.TAG`; the tag defaults to the process id.
  explicit AtomicFile(std::string final_path, const std::string& tag = "");
  ~AtomicFile();  // removes an unfinished temporary file
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& temporary_path() const { return temporary_; }
  // fsyncs the temporary file and renames it over the final path. When the rename fails the
  // finished temporary file is kept, and the PublishError names it.
  void commit();

 private:
  std::string final_;
  std::string temporary_;
  bool finished_ = false;  // commit() was reached: the temporary file is complete
};

// Writes `path` atomically with `write(temporary path)`. When writing or publishing fails (disk
// full, the directory removed or made read-only during a long run), the output is written again
// as a rescue copy in the working directory or, failing that, in $TMPDIR (/tmp), and the
// InputError says where it is. Call on one rank.
void write_output(const std::string& path, const std::function<void(const std::string&)>& write);

// Where a rescue copy of `path` may go, in order of preference: the working directory (on a
// cluster usually the shared file system the job was submitted from), then $TMPDIR (/tmp). The
// names carry this process's id, so a rescue never overwrites an earlier one.
std::vector<std::string> rescue_paths(const std::string& path);

}  // namespace pdsp
