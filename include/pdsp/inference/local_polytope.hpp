#pragma once
// Beliefs made into a point of the local polytope. The beliefs that the messages give are
// consistent (each factor's marginals equal its variables' beliefs) only once the messages have
// converged; until then they are no point of the polytope, and the eps = 0 dual at them bounds
// nothing. The certificate of training at eps = 0 (docs/eps_zero.md) needs a point of the
// polytope at every iteration, so it reads these repaired beliefs instead.
#include <cstdint>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/kernels.hpp"

namespace pdsp {

// Rewrites the tables of factors [first, last) of `belief` (the layout of kernels.hpp) so that
// each is non-negative and its marginals are its variables' beliefs b_k, which are left as they
// are (each must be non-negative and sum to one). A table b with marginals m_k is first scaled
// down, entry t by min over its variables k of min(1, b_k(t_k) / m_k(t_k)), so that no marginal
// exceeds its variable's belief; what each variable then lacks, r_k = b_k - (marginal), sums to
// the same mass M = 1 - sum(scaled b) for every k, and the table gets M prod_k r_k(t_k) / M
// added: non-negative, and with marginal r_k on each variable. A consistent table stays as it
// is, and a nearly consistent one changes by about its inconsistency, however close to a vertex
// it is (low temperatures); a mixture with the product of the b_k would not.
// Pairs of binary variables go to make_binary_pair_consistent, every other factor to
// make_table_consistent.
void make_factor_beliefs_consistent(const Dataset& data, const FactorGraph& graph, int64_t first,
                                    int64_t last, double* belief, Workspace& w);
// Factor a, whatever its arity and cardinalities.
void make_table_consistent(const Dataset& data, const FactorGraph& graph, int64_t a, double* belief,
                           Workspace& w);
// A 2 x 2 table t (t[2 i + j] for the first variable's state i, the second's j) with the beliefs
// x and y of its variables: make_table_consistent's arithmetic in the same order, unrolled (the
// general loops over slots were a quarter of an eps = 0 run on a binary grid).
void make_binary_pair_consistent(double* t, const double* x, const double* y);

}  // namespace pdsp
