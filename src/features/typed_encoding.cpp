#include "pdsp/features/typed_encoding.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/data/allocation.hpp"
#include "pdsp/inference/table_ops.hpp"

namespace pdsp {
namespace {

// Moment blocks, as in FeatureIndex: at most kMaxBlocks, at least kMinBlockWork multiply-adds
// each, and at least kWorkPerBlockSum per block and parameter, so that zeroing and adding the
// block vectors costs at most 1/8 of a pass.
constexpr int64_t kMaxBlocks = 64;
constexpr int64_t kMinBlockWork = int64_t{1} << 14;
constexpr int64_t kWorkPerBlockSum = 8;
// Types whose regions have at least this many states (one SIMD register of doubles) take the
// state-minor layout; with fewer (yeast's binary labels) the lanes stay mostly empty and the
// state-major loop over a row's entries is faster.
constexpr int64_t kStateMinorStates = 8;
// A type's section is mapped to and from theta by the threads from this many entries up.
constexpr int64_t kParallelSection = int64_t{1} << 15;

}  // namespace

TypedEncoding::TypedEncoding(const Dataset& data, Kind kind)
    : types_(kind == Kind::Variables ? data.var_types : data.factor_types),
      obs_(data.observations),
      region_offset_(kind == Kind::Variables ? &data.state_offset : &data.table_offset),
      example_offset_(kind == Kind::Variables ? &data.var_offset : &data.factor_offset),
      base_(kind == Kind::Variables ? 0 : data.num_states()),
      regions_(kind == Kind::Variables ? data.num_vars() : data.num_factors()),
      kind_(kind) {
  if (!types_.present) return;
  std::vector<int64_t> work(static_cast<size_t>(regions_), 0);
  stride_.assign(static_cast<size_t>(types_.num_types()), 0);
  for (int64_t r = 0; r < regions_; ++r) {
    const int32_t k = types_.type[r];
    if (k < 0) continue;
    int64_t entries = 1;
    double row_sum = 1.0;
    if (types_.dim[k] > 0) {
      const LocalIndex row = types_.obs_row[r];
      entries = obs_.ptr[row + 1] - obs_.ptr[row];
      row_sum = 0.0;
      for (int64_t e = obs_.ptr[row]; e < obs_.ptr[row + 1]; ++e)
        row_sum += std::abs(obs_.value_at(e));
    }
    largest_row_sum_ = std::max(largest_row_sum_, row_sum);
    work[r] = size(r) * std::max<int64_t>(entries, 1);
    stride_[k] = std::max(stride_[k], size(r));
  }
  for (int64_t k = 0; k < types_.num_types(); ++k)
    state_minor_.push_back(types_.dim[k] > 0 && stride_[k] >= kStateMinorStates);
  // Regions of few states that share a row are summed as groups; a type's own section covers
  // only its regions outside groups (none on yeast).
  groups_ = find_row_groups(
      types_, regions_, [this](int64_t r) { return size(r); },
      [this](int64_t r) {
        const int32_t k = types_.type[r];
        return k >= 0 && types_.dim[k] > 0 && !state_minor_[k];
      });
  if (!groups_.pattern.empty()) {
    std::fill(stride_.begin(), stride_.end(), 0);
    for (int64_t r = 0; r < regions_; ++r)
      if (types_.type[r] >= 0 && !groups_.in_group(r))
        stride_[types_.type[r]] = std::max(stride_[types_.type[r]], size(r));
  }
  for (int64_t k = 0; k < types_.num_types(); ++k)
    section_.push_back(section_.back() + std::max<int64_t>(types_.dim[k], 1) * stride_[k]);
  // A pattern's section: its regions' states side by side for each observation entry j.
  for (const RowGroups::Pattern& pattern : groups_.patterns) {
    const int64_t dim = types_.dim[pattern.types.front()];
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < pattern.members(); ++i)
        for (int64_t t = 0; t < pattern.column[i + 1] - pattern.column[i]; ++t)
          pattern_param_.push_back(types_.param_offset[pattern.types[i]] + t * dim + j);
    section_.push_back(section_.back() + static_cast<int64_t>(dim * pattern.width()));
  }
  resize_on_huge_pages(minor_theta_, static_cast<size_t>(section_.back()));
  // A round ends before the first pattern section that names a parameter the round already
  // names.
  const int64_t types = types_.num_types();
  std::vector<int64_t> round_of(
      static_cast<size_t>(pattern_param_.empty()
                              ? 0
                              : *std::max_element(pattern_param_.begin(), pattern_param_.end()) +
                                    1),
      -1);
  round_start_.assign(1, types);
  const int64_t first_pattern_position = section_[types];
  for (int64_t k = types; k + 1 < static_cast<int64_t>(section_.size()); ++k) {
    const auto round = static_cast<int64_t>(round_start_.size()) - 1;
    const auto param = [&](int64_t p) { return pattern_param_[p - first_pattern_position]; };
    for (int64_t p = section_[k]; p < section_[k + 1]; ++p)
      if (round_of[param(p)] == round) {
        round_start_.push_back(k);
        break;
      }
    for (int64_t p = section_[k]; p < section_[k + 1]; ++p)
      round_of[param(p)] = static_cast<int64_t>(round_start_.size()) - 1;
  }
  round_start_.push_back(static_cast<int64_t>(section_.size()) - 1);
  int64_t total = 0;
  for (int64_t w : work) total += w;
  const int64_t span = section_.back();
  const int64_t blocks = std::clamp(
      std::min(total / kMinBlockWork, total / (kWorkPerBlockSum * std::max<int64_t>(span, 1))),
      int64_t{1}, kMaxBlocks);
  // Block b starts at the first region with at least b/blocks of the work before it.
  block_start_.assign(1, 0);
  int64_t done = 0;
  for (int64_t r = 0; r < regions_; ++r) {
    if (done * blocks >= total * static_cast<int64_t>(block_start_.size()) &&
        static_cast<int64_t>(block_start_.size()) < blocks)
      block_start_.push_back(r);
    done += work[r];
  }
  block_start_.push_back(regions_);
  block_sums_ = allocate_vector<double>(data.source(),
                                        "the moments of typed features (" +
                                            std::to_string(block_start_.size() - 2) +
                                            " blocks of " + std::to_string(span) + " sums)",
                                        static_cast<int64_t>(block_start_.size() - 2) * span);
}

void TypedEncoding::block_potentials(int64_t r, const double* block, double* potential) const {
  const int64_t states = size(r);
  const int64_t dim = types_.dim[types_.type[r]];
  if (dim == 0) {
#pragma omp simd
    for (int64_t t = 0; t < states; ++t) potential[t] += block[t];
    return;
  }
  const LocalIndex row = types_.obs_row[r];
  const int32_t* index = obs_.index.data() + obs_.ptr[row];
  const int64_t entries = obs_.ptr[row + 1] - obs_.ptr[row];
  for (int64_t t = 0; t < states; ++t) {
    const double* w = block + t * dim;
    double u = 0.0;
    if (obs_.value.empty()) {  // binary observations: no multiplication
      for (int64_t e = 0; e < entries; ++e) u += w[index[e]];
    } else {
      const double* x = obs_.value.data() + obs_.ptr[row];
      for (int64_t e = 0; e < entries; ++e) u += w[index[e]] * x[e];
    }
    potential[t] += u;
  }
}

void TypedEncoding::block_moments(int64_t r, const double* weight, double* block) const {
  const int64_t states = size(r);
  const int64_t dim = types_.dim[types_.type[r]];
  if (dim == 0) {
#pragma omp simd
    for (int64_t t = 0; t < states; ++t) block[t] += weight[t];
    return;
  }
  const LocalIndex row = types_.obs_row[r];
  for (int64_t t = 0; t < states; ++t) {
    double* g = block + t * dim;
    for (int64_t e = obs_.ptr[row]; e < obs_.ptr[row + 1]; ++e)
      g[obs_.index[e]] += weight[t] * obs_.value_at(e);
  }
}

void TypedEncoding::minor_potentials(int64_t r, const double* section, double* potential) const {
  // u(t) = sum over the row's entries e of x_e times the parameters of entry e.
  const int32_t k = types_.type[r];
  const LocalIndex row = types_.obs_row[r];
  const int64_t first = obs_.ptr[row], stride = stride_[k];
  const int32_t* index = obs_.index.data() + first;
  add_weighted_rows(
      obs_.ptr[row + 1] - first, size(r),
      [section, index, stride](int64_t e) { return section + index[e] * stride; },
      [this, first](int64_t e) { return obs_.value_at(first + e); }, potential);
}

void TypedEncoding::minor_moments(int64_t r, const double* weight, double* section) const {
  const int32_t k = types_.type[r];
  const int64_t states = size(r);
  const LocalIndex row = types_.obs_row[r];
  for (int64_t e = obs_.ptr[row]; e < obs_.ptr[row + 1]; ++e) {
    double* column = section + obs_.index[e] * stride_[k];
    const double x = obs_.value_at(e);
#pragma omp simd
    for (int64_t t = 0; t < states; ++t) column[t] += weight[t] * x;
  }
}

void TypedEncoding::group_potentials(int64_t head, double* potential) const {
  const int32_t p = groups_.pattern[head];
  const int64_t width = groups_.patterns[p].width();
  const double* section = minor_theta_.data() + section_[types_.num_types() + p];
  const LocalIndex row = types_.obs_row[head];
  const int64_t first = obs_.ptr[row];
  const int32_t* index = obs_.index.data() + first;
  add_weighted_rows(
      obs_.ptr[row + 1] - first, width,
      [section, index, width](int64_t e) { return section + index[e] * width; },
      [this, first](int64_t e) { return obs_.value_at(first + e); }, potential);
}

int64_t TypedEncoding::group_moments(int64_t r, int64_t end, const double* head_weight,
                                     double* sums) const {
  const int32_t p = groups_.pattern[r];
  const RowGroups::Pattern& pattern = groups_.patterns[p];
  const int64_t head = r - groups_.member[r];
  const int64_t last = std::min(end, head + pattern.members());
  const int64_t width = pattern.width();
  const int64_t from = pattern.column[r - head], to = pattern.column[last - head];
  const double* w = head_weight;
  double* section = sums + section_[types_.num_types() + p];
  const LocalIndex row = types_.obs_row[head];
  for (int64_t e = obs_.ptr[row]; e < obs_.ptr[row + 1]; ++e) {
    double* column = section + obs_.index[e] * width;
    const double x = obs_.value_at(e);
#pragma omp simd
    for (int64_t c = from; c < to; ++c) column[c] += w[c] * x;
  }
  return last;
}

void TypedEncoding::region_potentials(int64_t r, std::span<const double> theta,
                                      double* potential) const {
  const int32_t k = types_.type[r];
  if (k >= 0) block_potentials(r, theta.data() + types_.param_offset[k], potential);
}

void TypedEncoding::region_moments(int64_t r, const double* weight, double* z) const {
  const int32_t k = types_.type[r];
  if (k >= 0) block_moments(r, weight, z + types_.param_offset[k]);
}

void TypedEncoding::section_potentials(int64_t r, double* potential) const {
  const int32_t k = types_.type[r];
  if (k < 0) return;
  const double* section = minor_theta_.data() + section_[k];
  if (state_minor_[k])
    minor_potentials(r, section, potential);
  else
    block_potentials(r, section, potential);
}

void TypedEncoding::section_moments(int64_t r, const double* weight, double* sums) const {
  const int32_t k = types_.type[r];
  if (k < 0) return;
  double* section = sums + section_[k];
  if (state_minor_[k])
    minor_moments(r, weight, section);
  else
    block_moments(r, weight, section);
}

template <class Pair>
void TypedEncoding::for_type_section(int64_t k, Pair pair) const {
  const int64_t dim = std::max<int64_t>(types_.dim[k], 1), stride = stride_[k];
  const int64_t section = section_[k], offset = types_.param_offset[k];
  // Small sections (yeast's 91 label-pair tables of 4 entries) are mapped without waking the
  // threads: one parallel region per section there cost more than the copies.
  const bool parallel = dim * stride >= kParallelSection;
  if (!state_minor_[k]) {  // the section is theta's block as it is
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t p = 0; p < dim * stride; ++p) pair(section + p, offset + p);
    return;
  }
  // Position j * stride + t holds parameter t * dim + j: tiles of kTile entries j, each read
  // along theta's rows and written along the section's.
  constexpr int64_t kTile = 64;
  const int64_t tiles = (dim + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t tile = 0; tile < tiles; ++tile)
    for (int64_t t = 0; t < stride; ++t)
      for (int64_t j = tile * kTile; j < std::min(dim, (tile + 1) * kTile); ++j)
        pair(section + j * stride + t, offset + t * dim + j);
}

void TypedEncoding::add_potentials(std::span<const double> theta, std::span<double> potential,
                                   const uint8_t* skip_factor) const {
  if (!types_.present) return;
  double* section = minor_theta_.data();
  const int64_t types = types_.num_types();
  for (int64_t k = 0; k < types; ++k)
    for_type_section(k, [&](int64_t p, int64_t q) { section[p] = theta[q]; });
  const int64_t first_pattern_position = section_[types];
  const auto patterns = static_cast<int64_t>(pattern_param_.size());
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < patterns; ++p)
    section[first_pattern_position + p] = theta[pattern_param_[p]];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < regions_; ++r) {
    if (kind_ == Kind::Factors && skip_factor != nullptr && skip_factor[r]) continue;
    if (!groups_.in_group(r))
      section_potentials(r, potential.data() + position(r));
    else if (groups_.member[r] == 0)
      group_potentials(r, potential.data() + position(r));
  }
}

template <class MakeWeights>
void TypedEncoding::sum_moments(MakeWeights make_weights, std::span<double> z,
                                const uint8_t* skip_factor) const {
  if (!types_.present) return;
  const int64_t blocks = static_cast<int64_t>(block_start_.size()) - 1;
  const int64_t span = section_.back();
#pragma omp parallel for schedule(dynamic)
  for (int64_t b = 0; b < blocks; ++b) {
    double* sums = block_sums(b);
    std::fill(sums, sums + span, 0.0);
    auto weights = make_weights();
    // A block may start or end inside a group: it sums that group's regions in the block.
    // Folded factors (skip_factor) have tables of their own type, never an observation row,
    // so no group holds one.
    for (int64_t r = block_start_[b]; r < block_start_[b + 1];) {
      if (groups_.in_group(r)) {
        const int64_t head = r - groups_.member[r];
        const int64_t end = head + groups_.patterns[groups_.pattern[r]].members();
        r = group_moments(r, block_start_[b + 1], weights(head, end), sums);
        continue;
      }
      if (kind_ == Kind::Variables || skip_factor == nullptr || !skip_factor[r])
        section_moments(r, weights(r, r + 1), sums);
      ++r;
    }
  }
  // The blocks' sums in block 0's vector, then into z: the types' sections one after another,
  // the patterns' round by round (two sections may name the same parameter, never one round).
  double* total = block_sums(0);
  for (int64_t b = 1; b < blocks; ++b) {
    const double* sums = block_sums(b);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < span; ++p) total[p] += sums[p];
  }
  const int64_t types = types_.num_types();
  for (int64_t k = 0; k < types; ++k)
    for_type_section(k, [&](int64_t p, int64_t q) { z[q] += total[p]; });
  const int64_t first_pattern_position = section_[types];
  for (size_t i = 0; i + 1 < round_start_.size(); ++i) {
#pragma omp parallel for schedule(static)
    for (int64_t p = section_[round_start_[i]]; p < section_[round_start_[i + 1]]; ++p)
      z[pattern_param_[p - first_pattern_position]] += total[p];
  }
}

void TypedEncoding::add_moments(std::span<const double> weight, std::span<double> z,
                                const uint8_t* skip_factor) const {
  sum_moments([&] { return [&](int64_t r, int64_t) { return weight.data() + position(r); }; }, z,
              skip_factor);
}

void TypedEncoding::add_truth_moments(const GroundTruth& truth, std::span<double> z) const {
  // Each block writes the indicator of the regions it reads into a buffer of its own: the
  // zeros add nothing to the sums, so they are bitwise those of the dense indicator.
  const auto make_weights = [&] {
    return [&, buffer = std::vector<double>()](int64_t r, int64_t last) mutable {
      const int64_t first = position(r);
      buffer.assign(static_cast<size_t>(position(last) - first), 0.0);
      for (int64_t s = r; s < last; ++s) {
        const int64_t i = kind_ == Kind::Variables ? truth.state_of(s) : truth.entry_of(s);
        if (i != GroundTruth::kNone) buffer[i - first] = 1.0;
      }
      return static_cast<const double*>(buffer.data());
    };
  };
  sum_moments(make_weights, z, nullptr);
}

void TypedEncoding::add_example_potentials(int64_t n, std::span<const double> theta,
                                           std::span<double> potential) const {
  if (!types_.present) return;
  for (int64_t r = (*example_offset_)[n]; r < (*example_offset_)[n + 1]; ++r)
    region_potentials(r, theta, potential.data() + position(r));
}

void TypedEncoding::add_example_moments(int64_t n, std::span<const double> weight,
                                        std::span<double> z) const {
  if (!types_.present) return;
  for (int64_t r = (*example_offset_)[n]; r < (*example_offset_)[n + 1]; ++r)
    region_moments(r, weight.data() + position(r), z.data());
}

std::string TypedEncoding::name() const {
  return kind_ == Kind::Variables ? "typed variables" : "typed factors";
}

}  // namespace pdsp
