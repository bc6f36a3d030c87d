#pragma once
// Clamping: inference with some variables held at given states (predict --clamp, the latent
// learner's completion of unobserved labels). A held variable's other states get a penalty in
// the potential offset (LocalProblem::set_potential_offset) so large that their weight
// exp(-penalty / temperature) is below the smallest double against the held state's, whatever
// the rest of the potentials: the beliefs are then those of the conditional problem to the
// last digit, and MAP is the conditional MAP.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/learning/local_problem.hpp"

namespace pdsp {

// The offset ([states] of `problem`'s slice) that holds every variable v with held[v] >= 0 at
// that state (held has one entry per variable of the slice, halo included; -1 leaves v free),
// for the potentials at `theta` and the problem's temperature. Collective over the ranks
// sharing the data (Dataset::communicator): every rank uses the same penalty.
std::vector<double> clamp_offset(const LocalProblem& problem, std::span<const int32_t> held,
                                 std::span<const double> theta);

}  // namespace pdsp
