#pragma once
// The exact MAP labelling of an example whose factor graph has no cycle (is_acyclic in
// counting.hpp: chains, trees, forests, with factors of any arity), by max-sum dynamic
// programming along breadth_first (factor_graph.hpp): each tree is rooted at its first variable,
// every factor sends the variable it was reached from the best it can add for each of its states,
// and the labels are read back from the root down. One pass up and one down, where message
// passing at eps = 0 with uniform counting numbers may take thousands of sweeps (and stop at its
// tolerance short of the maximum).
#include <cstdint>
#include <span>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/shared_tables.hpp"

namespace pdsp {

// `graph` is data's slot index; `potential` is u over the data set's layout [states | table
// entries] (design.md §2: u = base + f(theta)); writes the labels of example n's variables to
// labels[v] (local ids). The labelling maximises sum_v u_v(y_v) + sum_a u_a(y_a); among equal
// maxima the lowest state is taken at each choice. Example n must be acyclic (not checked here: the
// caller decides per data set). With `shared`, a factor that shares its type's table reads it at
// the table's representative factor, and its own table in `potential` is never read.
void forest_map(const Dataset& data, const FactorGraph& graph, int64_t n,
                std::span<const double> potential, std::span<int32_t> labels,
                const SharedPairwiseTables* shared = nullptr);

}  // namespace pdsp
