#pragma once
// Counting numbers (fractional entropy weights) c_v and c_a of every region (design.md §1).
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

enum class CountingMode { Auto, File, Uniform, Bethe };

CountingMode parse_counting_mode(const std::string& text);  // throws InputError
std::string counting_mode_name(CountingMode mode);

struct CountingNumbers {
  std::vector<double> var;     // c_v
  std::vector<double> factor;  // c_a
  std::vector<double> block;   // chat_v = c_v + sum_{a in N(v)} c_a, > 0 for every variable
  CountingMode mode = CountingMode::Uniform;  // the mode actually used (Auto resolved)
};

// `source` names the data file in error messages. Auto means File when the data carry both
// arrays, else Uniform.
CountingNumbers make_counting_numbers(const Dataset& data, const FactorGraph& graph,
                                      CountingMode mode, const std::string& source);

}  // namespace pdsp
