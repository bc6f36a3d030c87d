#pragma once
// Memory that grows with the number of parameters. Every rank holds theta and several vectors of
// its size whatever its share of the examples, so a parameter count beyond one rank's memory
// cannot run on any number of ranks: it is refused, naming the data file's @num_params, before
// anything of that size is allocated.
#include <string>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

// Vectors of one double per parameter that a training rank holds at once: theta, the gradient,
// the trial point, the reduced moments, d, the moment gap, the theta the potentials came from
// and the feature index's per-parameter offsets (a prediction holds fewer).
inline constexpr int kParameterVectors = 8;

// Throws InputError naming `source`'s @num_params when kParameterVectors vectors of
// data.num_params doubles do not fit in the memory available; the message says which parameters
// the slice's features actually use.
void check_parameter_memory(const Dataset& data, const std::string& source);

}  // namespace pdsp
