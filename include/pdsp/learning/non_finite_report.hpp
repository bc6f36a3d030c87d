#pragma once
// One line that says why a rank's potentials, messages or beliefs are not finite: which
// variable or factor (global ids), and which parameter times which feature value made the
// potential too large. A model with a huge theta entry then stops `predict` and `train` with an
// error instead of NaN marginals.
#include <cstdint>
#include <span>
#include <string>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

// Whether every entry is finite: a branch-free loop that vectorises, for the hot paths.
bool all_finite(std::span<const double> values);
// The index of the first entry that is not finite, or -1 (for the report).
int64_t first_non_finite(std::span<const double> values);

// Everything the report reads: the slice, its potentials u = loss + Phi theta (layout [states |
// table entries]) and the theta and loss they came from.
struct PotentialSource {
  const Dataset& data;
  std::span<const double> theta;
  std::span<const double> loss;  // empty without loss augmentation
  std::span<const double> potential;
};

// "the potential of variable 17 state 1 is inf (its largest term is theta[3] = 1e+308 times
// /vars/feat_value[35] = 2)".
std::string describe_potential(const PotentialSource& u, int64_t position);

// "the message between factor 40 and variable 17 is nan after the sweeps" for entry `entry` of
// the message arena.
std::string describe_message(const Dataset& data, const FactorGraph& graph,
                             std::span<const double> arena, int64_t entry);

// "the belief of variable 17 state 1 is nan after the sweeps" for `position` of the layout
// [states | table entries].
std::string describe_belief(const Dataset& data, std::span<const double> belief, int64_t position);

// Why finite potentials can still give non-finite messages or beliefs: "the potentials are too
// large for double precision at epsilon = 1; the largest: ..." (described as above).
std::string describe_largest_potential(const PotentialSource& u, double epsilon);

}  // namespace pdsp
