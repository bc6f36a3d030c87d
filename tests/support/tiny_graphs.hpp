#pragma once
// Tiny data sets for the brute-force checks: small enough to enumerate every labelling.
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/nonlocal_terms.hpp"

namespace pdsp::testing {

struct GraphShape {
  std::vector<int32_t> cards;
  std::vector<std::vector<int64_t>> factors;  // local variable ids
};

// A factor tree (the variable-factor graph has no cycle): 7 variables of 2 or 3 states, four
// pairwise factors and one of arity 3.
GraphShape tree_shape();
// A 3x3 grid with mixed cardinalities plus an arity-3 factor: many cycles.
GraphShape loopy_shape();
// A chain of variables with `card` states each.
GraphShape chain_shape(int length, int32_t card = 2);
// A rows x cols grid of binary variables with 4-neighbour pairwise factors, stored row by row;
// with `diagonals`, also both diagonals of every cell (not 2-colourable).
GraphShape grid_shape(int rows, int cols, bool diagonals = false);

// A factor of a shape placed in a data set: the global ids of its variables (`ids` holds the
// global id of each of the shape's variables) and its table size.
struct PlacedFactor {
  std::vector<int64_t> vars;
  int64_t table = 1;
};
PlacedFactor place_factor(const GraphShape& shape, const std::vector<int64_t>& local,
                          const std::vector<int64_t>& ids);

// One example per shape, random labels and random sparse features over `num_params` shared
// parameters (1 or 2 entries per row, values from N(0, 1)).
Dataset random_dataset(const std::vector<GraphShape>& shapes, int32_t num_params, uint64_t seed);

// 4x4 denoising grids of binary pixels, left half 0 and right half 1, one example each: a weight
// on each pixel's observation (its state-1 feature, parameter 0) and an Ising agreement weight
// (parameter 1). `noisy` examples observe a block of the right half as 0 (at theta (3, 2) mean
// field's pulled starts miss the largest bound and its best bound is below the truth's score);
// the others observe every pixel on its own side.
Dataset denoising_grids(const std::vector<bool>& noisy);

// A binary triangle whose truth (all 1) scores 17 under theta = (1, 5), while all 0 scores 16:
// variable 0 prefers 0 (weight 1 on its state 0), variables 1 and 2 prefer 1, and each pair gets
// 5 for agreeing. Mean field updating variable 0 first from uniform beliefs slides to all 0:
// its bound, about 16, lies below the truth's score, a negative NLL that exact inference
// (log Z >= log(e^17 + e^16)) never gives.
Dataset frustrated_triangle();

// `params` values drawn from N(0, sd^2) by a generator seeded with `seed`.
std::vector<double> normal_theta(int64_t params, double sd, uint64_t seed);

// Sets counting numbers c_v, c_a drawn from [low, high] on the data set (read by --counting file).
void set_random_counting(Dataset& data, double low, double high, uint64_t seed);

// Non-local terms on every example of `data` (variables of 3 states): two smoothed-hinge count
// templates and one squared; unless `smooth_only`, also the dictionary {0 1 2, 2 2 1 0} under
// both dictionary terms. psi has 5 weights.
NonlocalTerms three_state_terms(const Dataset& data, bool smooth_only);

}  // namespace pdsp::testing
