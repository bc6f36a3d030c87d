#pragma once
// CLI11 validators for numeric flags that also refuse NaN and infinities (CLI::Range lets NaN
// through: every comparison with it is false).
#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

#include "pdsp/util/errors.hpp"

namespace pdsp {

// A finite number in [low, high].
inline CLI::Validator finite_in(double low, double high) {
  const std::string range =
      "[" + CLI::detail::to_string(low) + ", " + CLI::detail::to_string(high) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value) || value < low || value > high)
          return "'" + text + "' is not a finite number in " + range;
        return "";
      },
      "NUMBER in " + range);
}

// A finite number >= low.
inline CLI::Validator finite_at_least(double low) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value) || value < low)
          return "'" + text + "' is not a finite number >= " + CLI::detail::to_string(low);
        return "";
      },
      "NUMBER >= " + CLI::detail::to_string(low));
}

// A whole number >= low that fits an int (CLI11's own ranges print the largest double in full).
inline CLI::Validator whole_at_least(int low) {
  const std::string rule = "a whole number >= " + std::to_string(low) + " (at most 2147483647)";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int value = 0;
        if (!CLI::detail::lexical_cast(text, value) || value < low)
          return "'" + text + "' is not " + rule;
        return "";
      },
      "INT >= " + std::to_string(low));
}

// --shards: "auto" or a whole number >= 1.
inline CLI::Validator shard_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int value = 0;
        if (text == "auto" || (CLI::detail::lexical_cast(text, value) && value >= 1)) return "";
        return "'" + text + "' is not a shard count (auto, or a whole number >= 1)";
      },
      "auto|N");
}
// --shards on `app`, in `group`: how examples are split across ranks (docs/guide.md "Shards").
inline void add_shards_option(CLI::App& app, std::string& shards, const std::string& group) {
  app.add_option("--shards", shards,
                 "split an example across ranks: auto (where it would leave a rank idle or "
                 "exceed a rank's share by 10%), N shards per large example, or 1 (never)")
      ->check(shard_count())
      ->group(group);
}
// The outputs of a `gen` command, in `group`: --train (required), --test (optional) and --quiet.
inline void add_generator_outputs(CLI::App& app, std::string& train, std::string& test, bool& quiet,
                                  const std::string& group) {
  app.add_option("--train", train, "training file to write")->required()->group(group);
  app.add_option("--test", test, "test file to write (optional)")->group(group);
  app.add_flag("--quiet", quiet, "no progress lines")->group(group);
}
// The value of a --shards flag that shard_count() accepted: 0 for auto.
inline int parse_shard_count(const std::string& text) {
  return text == "auto" ? 0 : std::stoi(text);
}
// For a setting (`who`, e.g. "--counting trw") that needs every example whole: refuses a forced
// split before any data is read, and turns auto into 1. Returns whether it turned auto into 1.
inline bool keep_examples_whole(std::string& shards, const std::string& who) {
  if (parse_shard_count(shards) > 1)
    throw InputError("--shards " + shards + ": " + who +
                     " needs whole examples; use --shards 1 or auto");
  const bool was_auto = shards != "1";
  shards = "1";
  return was_auto;
}

}  // namespace pdsp
