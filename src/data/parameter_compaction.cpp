#include "pdsp/data/parameter_compaction.hpp"

#include <algorithm>
#include <bit>

namespace pdsp {
namespace {

// The most states of a region of each type, every rank's regions together.
std::vector<double> states_per_type(const Dataset& slice, const RegionTypes& types, bool factors,
                                    Communicator& comm) {
  std::vector<double> states(static_cast<size_t>(types.num_types()), 0);
  for (size_t r = 0; r < types.type.size(); ++r) {
    const int32_t k = types.type[r];
    if (k < 0) continue;
    const auto i = static_cast<int64_t>(r);
    const double size = factors ? slice.table_offset[i + 1] - slice.table_offset[i]
                                : slice.card[static_cast<size_t>(i)];
    states[k] = std::max(states[k], size);
  }
  comm.allreduce({}, states);
  return states;
}

// Marks the observation positions the regions of `types` read.
template <class Positions>
void mark_read_positions(const Dataset& slice, const RegionTypes& types, Positions& used) {
  if (types.obs_row.empty()) return;
  const ObservationRows& obs = slice.observations;
  for (size_t r = 0; r < types.type.size(); ++r) {
    const int32_t k = types.type[r];
    const LocalIndex row = types.obs_row[r];
    if (k < 0 || types.dim[k] == 0 || row < 0) continue;
    for (int64_t e = obs.ptr[row]; e < obs.ptr[row + 1]; ++e) used.insert(obs.index[e]);
  }
}

bool overlaps(int64_t begin_a, int64_t end_a, int64_t begin_b, int64_t end_b) {
  return begin_a < end_b && begin_b < end_a;
}

}  // namespace

ParameterCompaction::PositionSet::PositionSet(int64_t positions)
    : words(static_cast<size_t>((positions + 63) / 64)) {}

int64_t ParameterCompaction::PositionSet::rank(int64_t j) const {
  const uint64_t below = j % 64 == 0 ? 0 : words[j / 64] & ((uint64_t{1} << (j % 64)) - 1);
  return before[j / 64] + std::popcount(below);
}

// A slab of positions at a time as counts, so that the buffer stays small.
void ParameterCompaction::PositionSet::unite(Communicator& comm) {
  if (comm.size() > 1) {
    constexpr size_t kSlabWords = 1 << 14;
    std::vector<int64_t> counts;
    for (size_t w0 = 0; w0 < words.size(); w0 += kSlabWords) {
      const size_t w1 = std::min(words.size(), w0 + kSlabWords);
      counts.assign((w1 - w0) * 64, 0);
      for (size_t w = w0; w < w1; ++w)
        for (int b = 0; b < 64; ++b) counts[(w - w0) * 64 + b] = (words[w] >> b) & 1;
      comm.allreduce_sum(counts);
      for (size_t w = w0; w < w1; ++w)
        for (int b = 0; b < 64; ++b)
          if (counts[(w - w0) * 64 + b] > 0) words[w] |= uint64_t{1} << b;
    }
  }
  before.assign(words.size() + 1, 0);
  for (size_t w = 0; w < words.size(); ++w) before[w + 1] = before[w] + std::popcount(words[w]);
}

ParameterCompaction ParameterCompaction::of_training_set(const Dataset& slice, Communicator& comm) {
  ParameterCompaction plan;
  plan.full_params_ = plan.compact_params_ = slice.num_params;
  if (!slice.is_compact()) return plan;

  struct Type {
    int64_t offset, states;
    int32_t dim;
  };
  std::vector<Type> types;
  int32_t widest = 0;
  for (const auto& [kind, factors] :
       {std::pair{&slice.var_types, false}, std::pair{&slice.factor_types, true}}) {
    if (!kind->present) continue;
    const std::vector<double> states = states_per_type(slice, *kind, factors, comm);
    for (int64_t k = 0; k < kind->num_types(); ++k) {
      types.push_back({kind->param_offset[k], static_cast<int64_t>(states[k]), kind->dim[k]});
      widest = std::max(widest, kind->dim[k]);
    }
  }
  if (widest == 0) return plan;

  PositionSet& used = plan.used_;
  used = PositionSet(widest);
  plan.positions_ = widest;
  mark_read_positions(slice, slice.var_types, used);
  mark_read_positions(slice, slice.factor_types, used);
  used.unite(comm);

  // One block per distinct typed span that a region has; identical spans are one block.
  for (const Type& t : types) {
    if (t.dim == 0 || t.states == 0) continue;
    auto same = std::find_if(plan.blocks_.begin(), plan.blocks_.end(), [&](const Block& b) {
      return b.offset == t.offset && b.dim == t.dim;
    });
    if (same == plan.blocks_.end()) same = plan.blocks_.insert(plan.blocks_.end(), Block{});
    same->offset = t.offset;
    same->dim = t.dim;
    same->states = std::max(same->states, t.states);
  }
  std::sort(plan.blocks_.begin(), plan.blocks_.end(),
            [](const Block& a, const Block& b) { return a.offset < b.offset; });
  const auto end_of = [](const Block& b) { return b.offset + b.states * b.dim; };
  for (size_t i = 1; i < plan.blocks_.size(); ++i)
    if (plan.blocks_[i].offset < end_of(plan.blocks_[i - 1])) return plan;
  const auto inside_a_block = [&](int64_t begin, int64_t end) {
    return std::any_of(plan.blocks_.begin(), plan.blocks_.end(),
                       [&](const Block& b) { return overlaps(begin, end, b.offset, end_of(b)); });
  };
  for (const Type& t : types)
    if (t.dim == 0 && t.states > 0 && inside_a_block(t.offset, t.offset + t.states)) return plan;
  int64_t rows_inside[1] = {0};
  for (const SparseRows* rows : {&slice.var_features, &slice.factor_features})
    for (const int32_t p : rows->param) rows_inside[0] += inside_a_block(p, p + 1) ? 1 : 0;
  comm.allreduce_sum(rows_inside);
  if (rows_inside[0] > 0) return plan;

  int64_t dropped = 0;
  for (Block& b : plan.blocks_) {
    // A block whose regions read nothing keeps one position, so that its dim stays > 0 (0 would
    // make it a shared table).
    b.compact_dim = static_cast<int32_t>(std::max<int64_t>(1, used.rank(b.dim)));
    b.dropped_before = dropped;
    b.compact_offset = b.offset - dropped;
    dropped += b.states * (b.dim - b.compact_dim);
  }
  if (dropped == 0) {
    plan.blocks_.clear();
    return plan;
  }
  plan.compact_params_ = plan.full_params_ - dropped;
  for (int64_t j = 0; j < widest; ++j)
    if (used.contains(j)) plan.kept_columns_.push_back(static_cast<int32_t>(j));
  return plan;
}

const ParameterCompaction::Block* ParameterCompaction::block_of_offset(int64_t offset) const {
  for (const Block& b : blocks_)
    if (b.offset == offset) return &b;
  return nullptr;
}

int64_t ParameterCompaction::compact_position(int64_t full) const {
  // The blocks that end at or before `full` dropped positions before it; the others start at or
  // after it.
  const auto after = std::partition_point(blocks_.begin(), blocks_.end(), [&](const Block& b) {
    return b.offset + b.states * b.dim <= full;
  });
  if (after == blocks_.begin()) return full;
  const Block& b = *std::prev(after);
  return full - b.dropped_before - b.states * (b.dim - b.compact_dim);
}

void ParameterCompaction::apply(Dataset& slice) const {
  if (!active()) return;
  // Rows that no region reads may hold positions nothing else reads; their entries are never
  // used, and keep a valid position rather than leave the arrays (whose file positions the
  // error messages name).
  for (int32_t& j : slice.observations.index)
    j = j < positions_ && used_.contains(j) ? static_cast<int32_t>(used_.rank(j)) : 0;
  for (RegionTypes* kind : {&slice.var_types, &slice.factor_types}) {
    for (int64_t k = 0; k < kind->num_types(); ++k) {
      if (kind->dim[k] == 0) {
        kind->param_offset[k] = compact_position(kind->param_offset[k]);
      } else if (const Block* b = block_of_offset(kind->param_offset[k]);
                 b && b->dim == kind->dim[k]) {
        kind->param_offset[k] = b->compact_offset;
        kind->dim[k] = b->compact_dim;
      } else {  // a type no region has: nothing reads its block
        kind->param_offset[k] = 0;
        kind->dim[k] = 1;
      }
    }
  }
  for (SparseRows* rows : {&slice.var_features, &slice.factor_features})
    for (int32_t& p : rows->param) p = static_cast<int32_t>(compact_position(p));
  slice.num_params = compact_params_;
}

std::vector<double> ParameterCompaction::expand(std::span<const double> compact) const {
  if (!active()) return {compact.begin(), compact.end()};
  std::vector<double> full(static_cast<size_t>(full_params_), 0.0);
  int64_t from = 0;  // the next full position outside the blocks
  for (const Block& b : blocks_) {
    std::copy(compact.begin() + compact_position(from), compact.begin() + b.compact_offset,
              full.begin() + from);
    for (int64_t t = 0; t < b.states; ++t) {
      const double* source = compact.data() + b.compact_offset + t * b.compact_dim;
      double* target = full.data() + b.offset + t * b.dim;
      for (size_t c = 0; c < kept_columns_.size() && kept_columns_[c] < b.dim; ++c)
        target[kept_columns_[c]] = source[c];
    }
    from = b.offset + b.states * b.dim;
  }
  std::copy(compact.begin() + compact_position(from), compact.end(), full.begin() + from);
  return full;
}

}  // namespace pdsp
