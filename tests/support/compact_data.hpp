#pragma once
// Format 2 (compact features) test data: a random data set that uses every kind of typed part,
// and its expansion to format 1 feature rows, computed independently of pdsp's TypedEncoding
// (the reference every compact computation is checked against).
#include <cstdint>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "support/tiny_graphs.hpp"

namespace pdsp::testing {

// One example per shape. Variables of the two variable types read a sparse observation row (dim
// 3, real values) or a per-state table (dim 0); factors use a shared table type or a type with
// a dense observation row (dim 2); some regions of each kind have no type, and a few rows keep
// format 1 features too, so potentials are sums of both parts.
Dataset random_compact_dataset(const std::vector<GraphShape>& shapes, uint64_t seed);

// random_compact_dataset on chains of 2 to 6 three-state variables: the typed variables form
// one block of three states (what --lbfgs-curvature auto takes the soft-max curvature for).
Dataset ternary_chains_dataset(uint64_t seed);

// Chains of 2 to 6 variables of 2 or 3 states whose typed variables read sparse rows of a wide
// type (dim kWideDim, at kWideOffset), in which the first half of the examples reads only
// positions below 75 and the second half only positions from 75, and a third of the positions
// are read by no example;
// format 1 rows on [0, 4) for some variables, a per-state table type, a shared table and a
// dense dim 2 factor type, a wide type no region has, and parameters at the end nothing reads.
inline constexpr int32_t kWideDim = 150;
inline constexpr int64_t kWideOffset = 4;
Dataset wide_sparse_chains(int examples, uint64_t seed);

// The same data set in format 1: each typed term appended to its position's feature row.
Dataset expand_to_rows(const Dataset& compact);

// Multi-label examples as the converter writes them (yeast): 5 binary labels of their own types
// reading the instance's row (dim 7, sparse), a shared 2 x 2 table per label pair; label 2 has
// no type in every third example.
Dataset multi_label_dataset(int examples);

inline constexpr int32_t kSharedTableRowParams = 4;  // format 1 rows of the variables
inline constexpr int32_t kSharedTableSize = 18;      // the largest table (3 x 2 x 3)
// Variables with random format 1 rows; every factor of type 0, a shared table (dim 0) that
// pairwise factors of several shapes and one of arity 3 read. The first factor of the first
// example keeps a format 1 row of its own, so it must take the general path.
// Parameters: the rows' kSharedTableRowParams, then the shared block's kSharedTableSize.
Dataset shared_table_dataset(const std::vector<GraphShape>& shapes, uint64_t seed);

}  // namespace pdsp::testing
