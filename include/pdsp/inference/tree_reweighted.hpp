#pragma once
// Tree-reweighted counting numbers (Wainwright, Jaakkola and Willsky 2005): each pairwise factor
// weighted by how often it appears in a mixture of spanning forests of its example, c_a = rho_a
// and c_v = 1 - sum_{a in N(v)} rho_a. Any mixture of forests makes the entropy a convex
// combination of tree entropies: concave, an upper bound on log Z at eps = 1, and exact on a
// forest (rho = 1 there: Bethe's numbers). design.md §1.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

// Spanning trees drawn per connected component of an example. rho_a moves in steps of 1/64:
// fine enough that its noise is small beside the gap between tree-reweighted and uniform
// numbers. The draws are made once per run and cost about 40 message sweeps (horses: 7 s on
// one thread for 164 grids of about 3,000 pixels).
inline constexpr int kSampledTrees = 64;

// rho_a of example n's factors, in the order of its factors: the frequency of a in
// kSampledTrees uniform spanning trees (Wilson's algorithm, seeded by the example's index in
// the file, so the same on any rank count) and, for factors that no drawn tree holds, as many
// further spanning forests as it takes to hold each once. 1 for a factor over one variable.
// Throws InputError naming `source` and the factor for a factor over more than two variables.
std::vector<double> edge_appearance(const Dataset& data, int64_t n, const std::string& source);

}  // namespace pdsp
