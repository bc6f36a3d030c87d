#pragma once
// One shard of an example split across ranks (docs/guide.md "Shards"; in the hybrid layout, of
// several consecutive examples split as one, which this text then calls "the example"). The
// rank's Dataset holds it as one example, laid out so that code which walks examples sees only
// what this rank owns:
//   - variables [0, var_offset[1]) are the shard's own, in file order; after them, outside every
//     example, come its halo: the other shards' variables that share a factor with an own one;
//   - factors [0, factor_offset[1]) are those this rank owns (a factor belongs to the shard of
//     its first variable); after them come the cut factors another shard owns, of which this
//     rank keeps a copy because one of its variables is in them.
// Every variable, factor, belief, term of F and D and moment is counted by its owner alone. The
// block updates of a colour class read the messages of other variables into shared factors, so
// after each class the ranks exchange those (ShardNeighbour's slot lists), and the sweep is the
// unsharded one.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/checksum.hpp"
#include "pdsp/data/local_index.hpp"

namespace pdsp {

// What this shard exchanges with one other shard of the same example. Both sides list the same
// global slots in the same order (colour, then file position), so a buffer needs no addresses.
struct ShardNeighbour {
  int rank = 0;
  // Slots (factor, own variable) of factors the neighbour also holds, by colour class: after
  // class c the messages of send_slots[send_class_ptr[c], send_class_ptr[c + 1]) go out.
  std::vector<int64_t> send_class_ptr{0};
  std::vector<LocalIndex> send_slots;
  // The same for the neighbour's variables in the halo: where its messages land.
  std::vector<int64_t> recv_class_ptr{0};
  std::vector<LocalIndex> recv_slots;
  // Own variables in the neighbour's halo and the neighbour's variables in this halo, in file
  // order: their beliefs are exchanged after each evaluation (the cut factors' checks read them).
  std::vector<LocalIndex> send_vars, recv_vars;
};

// Consecutive entries of an array in file order: `count` entries from position `file` (inside
// the example's part of the array) at position `local` of this rank's copy.
struct ArrayRun {
  int64_t file, local, count;
};
// Appends one entry's run, extending the last run when both positions continue it.
inline void add_to_runs(std::vector<ArrayRun>& runs, int64_t file, int64_t local, int64_t count) {
  if (!runs.empty() && runs.back().file + runs.back().count == file &&
      runs.back().local + runs.back().count == local) {
    runs.back().count += count;
    return;
  }
  runs.push_back({file, local, count});
}

struct ExampleShard {
  int index = 0;        // this shard's place among its example's (shard_variables)
  int64_t example = 0;  // the example's index in the file
  // Examples [example, example + examples) split as one (more than one in the hybrid layout, see
  // plan_rank_slices): "the example" below means all of them.
  int64_t examples = 1;
  int64_t cut_factors = 0;               // factors of the whole example that span several shards
  std::vector<int64_t> shard_variables;  // [count] own variables of each shard
  std::string method;                    // how the example was split (ShardPartition::method)
  // Colour classes: each file example's own colouring; class c of all of them is swept as one.
  int32_t colours = 0;                     // the most classes of any of the examples
  std::vector<int32_t> colour;             // [own variables] class in its example's colouring
  bool example_acyclic = false;            // no example split here has a cycle
  std::vector<uint8_t> var_acyclic;        // [variables, halo included] its file example has none
  std::vector<int32_t> halo_degree;        // [halo variables] factors of each in the whole example
  std::vector<int64_t> global_var;         // [variables, halo included] index in the file
  std::vector<int64_t> global_factor;      // [factors, copies included] index in the file
  std::vector<ShardNeighbour> neighbours;  // in rank order
  // The message arena in file order (what checkpoints store): the whole example's entries, and
  // where this shard's messages lie in it, those of its own variables (which it writes) and
  // those of its halo (which it reads back on a resume).
  int64_t example_message_entries = 0;
  std::vector<ArrayRun> own_message_runs, halo_message_runs;
  // Where the own variables and their states lie among the example's (what predictions write).
  std::vector<ArrayRun> own_var_runs, own_state_runs;
  // This shard's share of the example's part of the data set's fingerprint and its sizes
  // (fingerprint_example_part), set by the loader.
  Checksum fingerprint;
  std::array<int64_t, 5> fingerprint_sizes = {0, 0, 0, 0, 0};
};

}  // namespace pdsp
