#pragma once
// The parameters a training set can move. A typed block of format 2 (typed_features.hpp) spans
// every observation position j < dim for every state, but a position that no region of the
// training set reads has no moment: its gradient is the regulariser's alone, so from zero it
// stays zero, and learning it costs memory and time for nothing (a hashed text corpus of 2^18
// positions reads a third of them). Training runs on the positions some region reads, renumbered
// in their order; the model file gets the full layout back, with zeros where nothing was read.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

class ParameterCompaction {
 public:
  // The identity: nothing dropped.
  ParameterCompaction() = default;

  // Collective over the slices of one training set: the observation positions that some region
  // on some rank reads. The identity when nothing would be dropped, or when the layout keeps
  // the blocks from shrinking on their own: typed blocks that overlap each other, a shared
  // table or a feature row's parameter inside a typed block.
  static ParameterCompaction of_training_set(const Dataset& slice, Communicator& comm);

  bool active() const { return compact_params_ < full_params_; }
  int64_t full_params() const { return full_params_; }
  int64_t compact_params() const { return compact_params_; }

  // Rewrites `slice` (one of the set this was planned on) into the compact layout: observation
  // positions renumbered, each type's offset and dim, the feature rows' parameters, num_params.
  void apply(Dataset& slice) const;

  // A theta of the compact layout in the full one, zero at the positions nothing reads.
  std::vector<double> expand(std::span<const double> compact) const;

 private:
  // The part of theta one typed block (dim > 0) spans, in both layouts.
  struct Block {
    int64_t offset = 0;  // in the full layout
    int64_t states = 0;  // the most states of a region of the type (0: no region has it)
    int32_t dim = 0;
    int64_t compact_offset = 0;
    int32_t compact_dim = 0;
    int64_t dropped_before = 0;  // full positions dropped by the blocks before this one
  };

  // Observation positions as bits, with the count of set bits before each word: the compact
  // position of a used full one is its rank among them.
  struct PositionSet {
    std::vector<uint64_t> words;
    std::vector<int64_t> before;  // set bits in the words before

    explicit PositionSet(int64_t positions = 0);
    void insert(int64_t j) { words[j / 64] |= uint64_t{1} << (j % 64); }
    bool contains(int64_t j) const { return (words[j / 64] >> (j % 64)) & 1; }
    int64_t rank(int64_t j) const;   // used positions below j (j may be one past the last)
    void unite(Communicator& comm);  // the union over ranks, then `before`
  };

  // Of a position outside every block (or at a block's start or end).
  int64_t compact_position(int64_t full) const;
  const Block* block_of_offset(int64_t offset) const;

  std::vector<Block> blocks_;          // by offset, one per distinct typed block
  PositionSet used_;                   // the observation positions some region reads
  int64_t positions_ = 0;              // the widest type's dim: positions used_ covers
  std::vector<int32_t> kept_columns_;  // compact observation position -> full one
  int64_t full_params_ = 0;
  int64_t compact_params_ = 0;
};

}  // namespace pdsp
