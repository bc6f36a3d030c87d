#pragma once
// Checks, before any work starts, that every output a command will write can be written, so a
// long run is never lost to a mistyped path discovered at its end.
#include <string>
#include <vector>

namespace pdsp {

// A path as the user gave it, with the flag that gave it (for the error line).
struct NamedPath {
  std::string flag;
  std::string path;
};

// Each output file (empty paths skipped): not an existing directory or other non-regular file,
// in an existing directory where a file can be created now, none of the inputs, and no two
// outputs the same file. Throws InputError naming the flag and the path.
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// A directory pdsp will create files in (checkpoints): an existing directory where a file can
// be created, or a path whose nearest existing ancestor is such a directory.
void check_output_directory(const NamedPath& directory);

// Refuses to write `output` when it names the same file as `input` (the user's data).
void refuse_to_overwrite_input(const std::string& output, const std::string& input);

}  // namespace pdsp
