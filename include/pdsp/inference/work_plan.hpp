#pragma once
// How one sweep or one evaluation of a rank's examples is cut into chunks. Each bundle of
// examples has a sequence of phases; the chunks of one phase are independent of each other (a
// colour class of a sweep; the factors, then the variables of an evaluation) and may run on
// different threads; a chunk runs in order on one thread (a class along a tree is one chunk).
// Chunk boundaries depend on the data only, so per-chunk results combined in chunk order are the
// same for any thread count.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

struct WorkPlan {
  struct Chunk {
    int64_t begin;
    int64_t end;
  };
  std::vector<Chunk> chunks;
  std::vector<int64_t> phase_ptr{0};         // [phases + 1] chunks of each phase
  std::vector<int64_t> bundle_phase_ptr{0};  // [bundles + 1] phases of each bundle
  // Sweeps: the variables in the order they are updated; a chunk is a range of it.
  std::vector<LocalIndex> order;
  // A shard's sweep: [phases] the first chunk of each phase's interior variables (the boundary
  // ones, in chunks of their own, come before it); empty otherwise.
  std::vector<int64_t> phase_interior;

  int64_t num_chunks() const { return static_cast<int64_t>(chunks.size()); }
  int64_t num_bundles() const { return static_cast<int64_t>(bundle_phase_ptr.size()) - 1; }
};

// Consecutive examples of at most kBundleVariables variables together are swept side by side, as
// one bundle: its phase c holds colour class c of each of its examples, so that each example
// still updates its classes in order, and a kernel call updates a class of many small examples
// (yeast: 9 labels of 13 message blocks each, where one label filled two SIMD registers with 3
// of 16 lanes idle). Larger examples are bundles of their own. A chunk holds at most
// kChunkSlots message blocks (or one variable of larger degree), except that a class along a
// tree (Colouring::along_tree) is never cut: one thread updates it in order.
inline constexpr int64_t kBundleVariables = 128;
// A non-empty `subset` (distinct examples) plans those examples only, bundled in its order.
WorkPlan plan_sweep(const Colouring& colouring, const FactorGraph& graph,
                    std::span<const int64_t> subset = {});
// Two phases per example: ranges of its variables, then ranges of its factors, at most
// kChunkRegions regions per chunk (a factor's beliefs are checked against its variables' as they
// are computed: the marginalisation violation); a phase's parity in its bundle says which kind
// it holds. Consecutive examples of at most kBundleVariables variables together
// form one bundle, which one thread evaluates (yeast: 1,500 examples of 14 labels, where a bundle
// each cost the scheduling of 3,000 small chunks and made the two threads write neighbouring
// per-chunk results, so that the beliefs took as long on two threads as on one). On a shard
// (example_shard.hpp) the factor phase ends with chunks of the cut factors other shards own.
WorkPlan plan_evaluation(const Dataset& data, std::span<const int64_t> subset = {});

}  // namespace pdsp
