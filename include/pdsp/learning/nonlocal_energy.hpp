#pragma once
// The value and a subgradient of the non-local energies (nonlocal_terms.hpp) of one example at
// its variables' marginals. The subgradient lives on the variables' states only, so one offset
// of their potentials carries it (what Bethe-RDA's oracle calls take, bethe_rda.hpp).
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/nonlocal_terms.hpp"

namespace pdsp {

// The slopes of each term of one example at its marginals with a unit weight (psi = 1): a
// subgradient of L_psi is psi times each, summed (add_weighted_slopes). At a tie of two words, the
// lower index's; |x| has slope 0 at 0.
struct TermSlopes {
  std::vector<double> instance;  // h_j'(z) of each of the example's count instances, in order
  std::vector<double> unigram;   // sgn(U(mu)_s - u_s) of the closest word u [K]; empty: no L^u
  // sgn(mu_v(s) - w_v(s)) of the closest word w of the example's length, over its states in
  // order; empty without L^w or such a word.
  std::vector<double> position;
};

// The unit slopes of example n's terms at `belief` ([states] layout; the example's part is
// read). When `unit_values` ([psi's length]) is not empty, adds each term's value at unit weight
// to its weight's entry.
TermSlopes term_slopes(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                       std::span<const double> belief, std::span<double> unit_values = {});
// out (the example's part of [states]) += sum over the terms of psi times their slopes.
void add_weighted_slopes(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                         std::span<const double> psi, const TermSlopes& slopes,
                         std::span<double> out);
// per_weight[w] += <weight w's unit slopes, x> over the example's states ([psi's length]; x in
// the [states] layout): the derivative along psi_w of <add_weighted_slopes(psi), x>.
void add_slope_products(const Dataset& data, const NonlocalTerms& terms, int64_t n,
                        const TermSlopes& slopes, std::span<const double> x,
                        std::span<double> per_weight);

// L_psi of example n at the marginals `belief` ([states] layout; the example's part is read).
// When `subgradient` is not empty, adds a subgradient of L_psi to its example part: at a tie of
// two words, the lower word index's; |x| has slope 0 at 0.
double nonlocal_energy(const Dataset& data, const NonlocalTerms& terms, std::span<const double> psi,
                       int64_t n, std::span<const double> belief,
                       std::span<double> subgradient = {});

}  // namespace pdsp
