#pragma once
// One sub-command's flags, on CLI11: grouped --help, enumerations and ranges checked while
// parsing, and `--config FILE` (TOML or INI, as CLI11 reads them) whose settings the command
// line overrides. Rank 0 alone reads the config file; every rank parses the same text.
#include <memory>
#include <string>
#include <vector>

#include "pdsp/parallel/communicator.hpp"

namespace CLI {
class App;
}

namespace pdsp {

class CommandLine {
 public:
  // `command` is how the user types it ("train", "gen denoise"): it names the config file's
  // section for this command and starts every error message.
  CommandLine(std::string command, std::string summary);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Where the command declares its flags (CLI11's add_option, add_flag, group, check).
  CLI::App& flags() { return *app_; }
  const std::string& command() const { return command_; }

  // Rank 0 only: the text of the file named by --config in `args` ("" without one). Throws an
  // InputError naming the file when it cannot be read.
  std::string read_config(const std::vector<std::string>& args) const;
  // Parses the config text, then `args` over it, on this rank. Returns false after printing the
  // help (on the root) when --help was given. Throws InputError for any mistake.
  bool parse(const std::vector<std::string>& args, const std::string& config_text, bool root);
  // Collective: rank 0 reads the config file and shares it; every rank parses. Returns false
  // when --help was given.
  bool parse_collectively(const std::vector<std::string>& args, Communicator& comm);

  // The settings after parsing, one `name=value` line each (TOML): `--config` re-runs them.
  std::string effective_config() const;
  // Whether the user set `flag` (on the command line or in the config file).
  bool given(const std::string& flag) const;

 private:
  // The config file's settings for this command as `--name=value` arguments.
  std::vector<std::string> config_arguments(const std::string& config_text) const;

  std::string command_;
  std::string config_path_;
  std::unique_ptr<CLI::App> app_;
};

}  // namespace pdsp
