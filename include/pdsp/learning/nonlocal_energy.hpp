#pragma once
// The value and a subgradient of the non-local energies (nonlocal_terms.hpp) of one example at
// its variables' marginals. The subgradient lives on the variables' states only, so one offset
// of their potentials carries it (what Bethe-RDA's oracle calls take, bethe_rda.hpp).
#include <cstdint>
#include <span>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/nonlocal_terms.hpp"

namespace pdsp {

// L_psi of example n at the marginals `belief` ([states] layout; the example's part is read).
// When `subgradient` is not empty, adds a subgradient of L_psi to its example part: at a tie of
// two words, the lower word index's; |x| has slope 0 at 0.
double nonlocal_energy(const Dataset& data, const NonlocalTerms& terms, std::span<const double> psi,
                       int64_t n, std::span<const double> belief,
                       std::span<double> subgradient = {});

}  // namespace pdsp
