#pragma once
// Writes an output file under a temporary name in the same directory and renames it into place
// only when complete, so a crash never leaves a half-written file where the user's was.
#include <string>
#include <vector>

namespace pdsp {

class AtomicFile {
 public:
  // The temporary file is `final_path.tmp.TAG`; the tag defaults to the process id.
  explicit AtomicFile(std::string final_path, const std::string& tag = "");
  ~AtomicFile();  // removes the temporary file unless commit() ran
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& temporary_path() const { return temporary_; }
  // fsyncs the temporary file and renames it over the final path.
  void commit();

 private:
  std::string final_;
  std::string temporary_;
  bool committed_ = false;
};

// Refuses to write `output` when it names the same file as `input` (the user's data).
void refuse_to_overwrite_input(const std::string& output, const std::string& input);

// Checks every output before any work is done: its directory exists, it is none of the inputs,
// and no two outputs are the same file. Empty names are skipped.
void check_outputs(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs);

}  // namespace pdsp
