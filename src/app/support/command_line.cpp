#include "pdsp/app/command_line.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "pdsp/parallel/share_from_root.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The value of `--config` in `args` ("" when absent), found by CLI11 with every other flag
// left alone, so a config file can supply the required ones.
std::string config_path_in(const std::vector<std::string>& args) {
  CLI::App scan;
  scan.allow_extras();
  scan.set_help_flag();
  std::string path;
  scan.add_option("--config", path);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    scan.parse(reversed);
  } catch (const CLI::ParseError& error) {
    throw InputError(std::string("--config: ") + error.what());
  }
  return path;
}

// The config file's section of a command: its words joined by dots ("train", "gen.denoise"), as
// TOML nests tables; config_arguments reads the same words back from an item's parents.
std::string config_section(const std::string& command) {
  std::string section;
  for (const std::string& word : words_of(command)) section += (section.empty() ? "" : ".") + word;
  return section;
}

// The config file's text as rank 0 read it.
struct SharedConfig {
  std::string text;
  template <class Archive>
  void serialize(Archive& archive, unsigned) {
    archive& text;
  }
};

}  // namespace

CommandLine::CommandLine(std::string command, std::string summary)
    : command_(std::move(command)),
      app_(std::make_unique<CLI::App>(std::move(summary), "pdsp " + command_)) {
  // A flag given twice (in the config file and on the command line) takes the last value: the
  // config file's settings come first, so the command line overrides them.
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_->option_defaults()->always_capture_default();
  app_->allow_extras();
  app_->get_formatter()->column_width(30);
  app_->add_option("--config", config_path_,
                   "read settings from this TOML or INI file (`name = value` lines, optionally in "
                   "a [" +
                       config_section(command_) +
                       "] section); flags on the command line override them")
      ->configurable(false);
}

CommandLine::~CommandLine() = default;

std::string CommandLine::read_config(const std::vector<std::string>& args) const {
  const std::string path = config_path_in(args);
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the config file (--config)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the config file (--config)");
  // An empty file would otherwise be indistinguishable from no --config at all.
  return text.str().empty() ? std::string("\n") : text.str();
}

std::vector<std::string> CommandLine::config_arguments(const std::string& config_text) const {
  std::vector<std::string> arguments;
  if (config_text.empty()) return arguments;
  std::istringstream in(config_text);
  std::vector<CLI::ConfigItem> items;
  try {
    items = app_->get_config_formatter()->from_config(in);
  } catch (const CLI::Error& error) {
    throw InputError(config_path_ + ": " + error.what());
  }
  const std::vector<std::string> section = words_of(command_);
  for (const CLI::ConfigItem& item : items) {
    // Settings of other commands' sections may share the file; section markers carry nothing.
    if (!item.parents.empty() && item.parents != section) continue;
    if (item.name == "++" || item.name == "--") continue;
    const CLI::Option* option = app_->get_option_no_throw("--" + item.name);
    if (option == nullptr || !option->get_configurable())
      throw InputError(config_path_ + ": '" + item.fullname() + "' is not a setting of pdsp " +
                       command_ + " (see pdsp " + command_ + " --help)");
    // A flag takes its value after `=` (`--quiet=false`); other options take theirs as separate
    // words, because `--name=` with an empty value makes CLI11 take the next word as the value.
    if (option->get_expected_min() == 0) {
      arguments.push_back("--" + item.name + "=" + (item.inputs.empty() ? "true" : item.inputs[0]));
    } else {
      arguments.push_back("--" + item.name);
      arguments.insert(arguments.end(), item.inputs.begin(), item.inputs.end());
    }
  }
  return arguments;
}

bool CommandLine::parse(const std::vector<std::string>& args, const std::string& config_text,
                        bool root) {
  config_path_ = config_path_in(args);
  std::vector<std::string> all = config_arguments(config_text);
  all.insert(all.end(), args.begin(), args.end());
  std::vector<std::string> reversed(all.rbegin(), all.rend());  // CLI11 parses from the back
  try {
    app_->parse(reversed);
  } catch (const CLI::CallForHelp&) {
    if (root) std::fputs(app_->help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& error) {
    throw InputError(std::string(error.what()) + " (see pdsp " + command_ + " --help)");
  }
  // Extras are allowed while parsing only to be named here in the order they were typed.
  const std::vector<std::string> unknown = app_->remaining();
  if (!unknown.empty()) {
    std::string words;
    for (const std::string& word : unknown) words += " " + word;
    throw InputError("pdsp " + command_ + ": unknown flag or argument:" + words + " (see pdsp " +
                     command_ + " --help)");
  }
  return true;
}

bool CommandLine::parse_collectively(const std::vector<std::string>& args, Communicator& comm) {
  const SharedConfig shared =
      share_from_root<SharedConfig>(comm, [&](SharedConfig& s) { s.text = read_config(args); });
  bool proceed = true;
  run_collectively(comm, [&] { proceed = parse(args, shared.text, comm.is_root()); });
  return proceed;
}

std::string CommandLine::effective_config() const {
  return app_->config_to_str(/*default_also=*/true, /*write_description=*/false);
}

bool CommandLine::given(const std::string& flag) const {
  const CLI::Option* option = app_->get_option_no_throw(flag);
  return option != nullptr && option->count() > 0;
}

}  // namespace pdsp
