#pragma once
// Potentials and moments of format 2's typed features (data/typed_features.hpp) for one region
// kind, straight from the compact form: a region's potentials are small dense products of its
// type's parameter block with its observation row, never expanded to a row per state.
// Moments are summed over fixed blocks of regions into per-block vectors that are then added in
// block order, so that they do not depend on the thread count (design.md §6).
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/features/feature_encoding.hpp"
#include "pdsp/features/row_groups.hpp"

namespace pdsp {

class TypedEncoding final : public FeatureEncoding {
 public:
  enum class Kind { Variables, Factors };
  TypedEncoding(const Dataset& data, Kind kind);

  bool present() const { return types_.present; }
  std::string name() const override;
  // The FeatureEncoding operations over this kind's positions (the layout is [states | table
  // entries]); largest_row_sum is the largest sum of |x_j| over one region's observation row
  // (1 for a shared table).
  void add_potentials(std::span<const double> theta, std::span<double> potential,
                      const uint8_t* skip_factor = nullptr) const override;
  void add_moments(std::span<const double> weight, std::span<double> z,
                   const uint8_t* skip_factor = nullptr) const override;
  // add_moments' blocks and order with the labelled states alone set: bitwise its sums.
  void add_truth_moments(const GroundTruth& truth, std::span<double> z) const override;
  void add_example_potentials(int64_t n, std::span<const double> theta,
                              std::span<double> potential) const override;
  void add_example_moments(int64_t n, std::span<const double> weight,
                           std::span<double> z) const override;
  double largest_row_sum() const override { return largest_row_sum_; }

 private:
  // The typed term of region r's states into potential (from its first position); the moments
  // of its states' weights into z, whose index 0 is parameter `first_param`.
  void region_potentials(int64_t r, std::span<const double> theta, double* potential) const;
  void region_moments(int64_t r, const double* weight, double* z) const;
  // The same two in the sections' layout (below): from minor_theta_, into a block's sums.
  void section_potentials(int64_t r, double* potential) const;
  void section_moments(int64_t r, const double* weight, double* sums) const;
  // Both layouts of region r's type: `block` in theta's (state-major), `section` state-minor.
  void block_potentials(int64_t r, const double* block, double* potential) const;
  void block_moments(int64_t r, const double* weight, double* block) const;
  void minor_potentials(int64_t r, const double* section, double* potential) const;
  void minor_moments(int64_t r, const double* weight, double* section) const;
  // A row group's potentials (from its first region `head` and its first position), and the
  // moments of its regions from r to the group's end or `end`, whichever comes first, from the
  // weights of its positions (head_weight: the head's first); returns the region after them.
  void group_potentials(int64_t head, double* potential) const;
  int64_t group_moments(int64_t r, int64_t end, const double* head_weight, double* sums) const;
  // add_moments over weights read through one `weights = make_weights()` per block:
  // weights(r, last) points at position(r)'s weight and covers the regions [r, last).
  template <class MakeWeights>
  void sum_moments(MakeWeights make_weights, std::span<double> z, const uint8_t* skip_factor) const;
  // Calls pair(p, q) for every position p of type k's section and its parameter q, in an order
  // that keeps both sides in cache (the state-minor transpose by tiles; theta's order where
  // the layouts agree), from several threads (no two calls share p or q).
  template <class Pair>
  void for_type_section(int64_t k, Pair pair) const;
  int64_t position(int64_t r) const { return base_ + (*region_offset_)[r]; }
  int64_t size(int64_t r) const { return (*region_offset_)[r + 1] - (*region_offset_)[r]; }

  const RegionTypes& types_;
  const ObservationRows& obs_;
  const std::vector<LocalIndex>* region_offset_;  // state_offset or table_offset
  const std::vector<int64_t>* example_offset_;    // var_offset or factor_offset
  int64_t base_;                                  // 0, or the number of states
  int64_t regions_;
  Kind kind_;
  double largest_row_sum_ = 0;
  // The full passes (add_potentials, add_moments) read theta and sum moments in sections, one
  // per type: a type with observation rows and regions of many states (state_minor_) keeps the
  // parameter of state t and observation entry j at [section + j * stride + t] (stride: the
  // states of the type's largest region in the slice), so that the states of one entry are
  // contiguous and the loops over them vectorise (theta's state-major layout puts them dim
  // apart; on OCR the scattered sums were most of the moments); other types keep theta's
  // layout. The per-example forms, which the
  // baselines call from several threads at once, read theta itself.
  // Row groups (row_groups.hpp) read their parameters from sections of their own, one per
  // pattern, after the types' sections, in the state-minor layout over the group's states
  // (stride: the pattern's width); a type's stride then counts only its regions outside groups.
  RowGroups groups_;
  std::vector<int64_t> section_{0};   // [types + patterns + 1] where each section starts
  std::vector<int64_t> stride_;       // [types]
  std::vector<uint8_t> state_minor_;  // [types]
  // The parameter of each position of the patterns' sections (from section_[types]); a type's
  // section follows from its layout, with no index (8 bytes a parameter on large models).
  std::vector<int64_t> pattern_param_;
  // The block sums of the patterns' sections are added to the moments in rounds of consecutive
  // sections in which no parameter appears twice, one parallel loop per round (one per section
  // made yeast's 91 label pairs 91 loops of 4 sums, each waking and joining the threads);
  // [rounds + 1] the first pattern section of each round. The types' sections come first, one
  // after another.
  std::vector<int64_t> round_start_{0};
  // theta in the sections' layout, filled by add_potentials and read by it alone (so, like
  // add_moments' block sums, not for two calls at once). Between two add_potentials it is free,
  // and add_moments sums block 0 in it: a vector of the model's size less.
  mutable std::vector<double> minor_theta_;
  // Moment blocks: block b covers regions [block_start_[b], block_start_[b + 1]) and sums into
  // its own vector in the sections' layout: block 0 into minor_theta_, block b > 0 at
  // block_sums_[(b - 1) * span].
  std::vector<int64_t> block_start_;
  mutable std::vector<double> block_sums_;
  double* block_sums(int64_t b) const {
    return b == 0 ? minor_theta_.data()
                  : block_sums_.data() + (b - 1) * static_cast<int64_t>(minor_theta_.size());
  }
};

}  // namespace pdsp
