#pragma once
// The settings of `pdsp train` as one annotated table, a row each: the one place that says a
// setting's flag (and so its config-file name and its line in --help and the man page), its help
// group and text, the rule its value obeys (checked while the flags are parsed and again by
// TrainConfig::validate), its name in the model's attributes, the metrics and the config line,
// and whether a checkpoint resumes only with the same value. The defaults are TrainConfig's
// member initialisers. `pdsp train --list-parameters` prints the table, from which
// run/train_parameters.py writes the guide's table and the Python Estimator's defaults.
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "pdsp/learners/train_config.hpp"

namespace pdsp {

// What a value must be: a number in a range, or one of some words.
struct ParameterRule {
  // Numbers: low <= value <= high (low < value with low_open), or exactly 0 with or_zero;
  // finite always. Whole numbers for int members.
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  bool low_open = false;
  bool or_zero = false;
  // Words: one of these (empty for numbers and free text such as file names).
  std::vector<std::string> words;

  // "a finite number >= 1e-12", "0 or a finite number >= 1e-12", "a whole number in [1, 200]",
  // "one of lbfgs, gradient"; "" for free text.
  std::string text(bool whole) const;
  bool admits(double value) const;
};

struct TrainParameter {
  std::string name;   // in the model's attributes, the metrics and the config line: "epsilon"
  std::string flag;   // "--epsilon"; the config file names it without the dashes
  std::string group;  // the section of --help
  std::string help;
  std::variant<double TrainConfig::*, int TrainConfig::*, std::string TrainConfig::*,
               CountingMode TrainConfig::*>
      member;
  ParameterRule rule;
  bool recorded = true;     // in the model's attributes, the metrics and the config line
  bool trajectory = false;  // a checkpoint resumes only with the same value
  bool required = false;    // the command line must give it

  bool is_whole() const { return std::holds_alternative<int TrainConfig::*>(member); }
  // The value in `config` as a typed field (what the model's attributes store), and as the
  // flag would take it ("1e-06", "lbfgs", "auto").
  FieldValue value(const TrainConfig& config) const;
  std::string value_text(const TrainConfig& config) const { return field_text(value(config)); }
};

// Two of the --help groups of the table, to which the command adds its run options.
inline constexpr const char* kFilesGroup = "Files";
inline constexpr const char* kPerformanceGroup = "Performance";

// Every row, in the order --help shows them within their groups and the model records them.
const std::vector<TrainParameter>& train_parameters();

}  // namespace pdsp
