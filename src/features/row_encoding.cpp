#include "pdsp/features/row_encoding.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/data/allocation.hpp"

namespace pdsp {

namespace {

// Blocks of the by-rows order: at most kMaxBlocks, at least kMinBlockEntries entries each (small
// data sets do not pay for the block sums), and at least kEntriesPerBlockSum entries per block
// and parameter: zeroing and adding the block sums then costs at most 1/8 of a pass over the
// entries. Fewer entries per parameter than that, and the transposed copy is the better order.
constexpr int64_t kMaxBlocks = 64;
constexpr int64_t kMinBlockEntries = int64_t{1} << 14;
constexpr int64_t kEntriesPerBlockSum = 8;

// start + sum over row i's entries of theta[param] * value.
inline double row_times_theta(const SparseRows& rows, int64_t i, std::span<const double> theta,
                              double start) {
  for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k)
    start += theta[rows.param[k]] * rows.value[k];
  return start;
}

int64_t num_entries(const Dataset& data) {
  return data.var_features.nnz() + data.factor_features.nnz();
}

// Feature entries of the positions before position i of the potential layout.
int64_t entries_before(const Dataset& data, int64_t i) {
  const int64_t states = data.num_states();
  return i <= states ? data.var_features.ptr[i]
                     : data.var_features.nnz() + data.factor_features.ptr[i - states];
}

// Calls add(rows, first, last, position) for the rows [first, last) of one part of the layout
// that lie in positions [begin, end); `position` is the layout position of row `first`.
template <class Add>
void for_each_part(const Dataset& data, int64_t begin, int64_t end, Add&& add) {
  const int64_t states = data.num_states();
  if (begin < states) add(data.var_features, begin, std::min(end, states), begin);
  if (end > states) {
    const int64_t first = std::max(begin, states);
    add(data.factor_features, first - states, end - states, first);
  }
}

bool has_one_entry_per_row(const SparseRows& rows) {
  for (int64_t i = 0; i <= rows.num_rows(); ++i)
    if (rows.ptr[i] != i) return false;
  return true;
}

// out[i] = offset[i] (or 0 without offset) + row i of `rows` times theta, for every row;
// `offset` may be `out` itself. One pass that writes `out`: on grids the potentials are
// memory-bound, and a separate pass for the offset would cost a third of an iteration.
void rows_times_theta(const SparseRows& rows, bool one_entry_per_row, std::span<const double> theta,
                      const double* offset, double* out) {
  const int64_t count = rows.num_rows();
  if (rows.nnz() == 0) {  // format 2 without rows: no row pointers to read
    if (offset == out) return;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) out[i] = offset != nullptr ? offset[i] : 0.0;
    return;
  }
  if (one_entry_per_row) {
    const int32_t* param = rows.param.data();
    const double* value = rows.value.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i)
      out[i] = (offset != nullptr ? offset[i] : 0.0) + theta[param[i]] * value[i];
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i)
    out[i] = row_times_theta(rows, i, theta, offset != nullptr ? offset[i] : 0.0);
}

// The largest sum of |value| over the entries of one row.
double largest_abs_row_sum(const SparseRows& rows) {
  if (rows.nnz() == 0) return 0.0;  // format 2 without rows: no row pointers to read
  double largest = 0.0;
  for (int64_t i = 0; i < rows.num_rows(); ++i) {
    double sum = 0.0;
    for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k) sum += std::abs(rows.value[k]);
    largest = std::max(largest, sum);
  }
  return largest;
}

// Calls visit(rows, row, position) for the rows of example n: its states, then its factors'
// table entries.
template <class Visit>
void for_each_row_of_example(const Dataset& data, int64_t n, Visit&& visit) {
  for (int64_t i = data.state_offset[data.var_offset[n]];
       i < data.state_offset[data.var_offset[n + 1]]; ++i)
    visit(data.var_features, i, i);
  for (int64_t t = data.table_offset[data.factor_offset[n]];
       t < data.table_offset[data.factor_offset[n + 1]]; ++t)
    visit(data.factor_features, t, data.num_states() + t);
}

}  // namespace

RowEncoding::RowEncoding(const Dataset& data, Order order)
    : data_(data),
      order_(order),
      one_entry_per_row_{has_one_entry_per_row(data.var_features),
                         has_one_entry_per_row(data.factor_features)},
      largest_row_sum_(std::max(largest_abs_row_sum(data.var_features),
                                largest_abs_row_sum(data.factor_features))) {
  const std::string source = data.source();
  const int64_t entries = num_entries(data);
  if (entries == 0) {  // format 2 without rows: nothing to index, no row pointers to read
    order_ = Order::ByParams;
    return;
  }
  const int64_t blocks =
      std::clamp(std::min(entries / kMinBlockEntries,
                          entries / (kEntriesPerBlockSum * std::max<int64_t>(1, data.num_params))),
                 int64_t{1}, kMaxBlocks);
  if (order_ == Order::Auto)
    order_ = kEntriesPerBlockSum * data.num_params <= entries ? Order::ByRows : Order::ByParams;
  if (order_ == Order::ByRows) {
    // Block b starts at the first position with at least b/blocks of the entries before it.
    const int64_t positions = data.num_states() + data.num_table_entries();
    block_start_.assign(static_cast<size_t>(blocks) + 1, positions);
    block_start_[0] = 0;
    for (int64_t b = 1; b < blocks; ++b) {
      const int64_t target = entries * b / blocks;
      int64_t low = block_start_[b - 1], high = positions;
      while (low < high) {
        const int64_t mid = low + (high - low) / 2;
        if (entries_before(data, mid) >= target)
          high = mid;
        else
          low = mid + 1;
      }
      block_start_[b] = low;
    }
    block_sums_ =
        allocate_vector<double>(source,
                                "the feature index (" + std::to_string(blocks) + " blocks of " +
                                    std::to_string(data.num_params) + " parameters)",
                                blocks * data.num_params);
    return;
  }
  param_ptr_ = allocate_vector<int64_t>(
      source, "the feature index (" + std::to_string(data.num_params) + " parameters)",
      data.num_params + 1);
  const SparseRows* parts[2] = {&data.var_features, &data.factor_features};
  const int64_t base[2] = {0, data.num_states()};
  for (const SparseRows* rows : parts)
    for (int32_t r : rows->param) ++param_ptr_[r + 1];
  for (size_t r = 1; r < param_ptr_.size(); ++r) param_ptr_[r] += param_ptr_[r - 1];
  position_.resize(static_cast<size_t>(param_ptr_.back()));
  value_.resize(static_cast<size_t>(param_ptr_.back()));
  std::vector<int64_t> fill(param_ptr_.begin(), param_ptr_.end() - 1);
  for (int part = 0; part < 2; ++part) {
    const SparseRows& rows = *parts[part];
    for (int64_t i = 0; i < rows.num_rows(); ++i)
      for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k) {
        const int64_t slot = fill[rows.param[k]]++;
        position_[slot] = base[part] + i;
        value_[slot] = rows.value[k];
      }
  }
}

void RowEncoding::add_moments(std::span<const double> weight, std::span<double> z,
                              const uint8_t*) const {
  if (order_ == Order::ByRows)
    moments_by_rows(weight, z);
  else
    moments_by_params(weight, z);
}

void RowEncoding::set_potentials(std::span<const double> theta, std::span<const double> base,
                                 std::span<double> potential, const uint8_t* skip_factor) const {
  rows_times_theta(data_.var_features, one_entry_per_row_[0], theta,
                   base.empty() ? nullptr : base.data(), potential.data());
  factor_rows_times_theta(theta, nullptr, potential.data() + data_.num_states(), skip_factor);
}

void RowEncoding::add_potentials(std::span<const double> theta, std::span<double> potential,
                                 const uint8_t* skip_factor) const {
  double* states = potential.data();
  double* entries = potential.data() + data_.num_states();
  rows_times_theta(data_.var_features, one_entry_per_row_[0], theta, states, states);
  factor_rows_times_theta(theta, entries, entries, skip_factor);
}

void RowEncoding::factor_rows_times_theta(std::span<const double> theta, const double* offset,
                                          double* out, const uint8_t* skip_factor) const {
  const SparseRows& rows = data_.factor_features;
  if (skip_factor == nullptr) {
    rows_times_theta(rows, one_entry_per_row_[1], theta, offset, out);
    return;
  }
  const int64_t factors = data_.num_factors();
#pragma omp parallel for schedule(static)
  for (int64_t a = 0; a < factors; ++a) {
    if (skip_factor[a]) continue;
    for (int64_t i = data_.table_offset[a]; i < data_.table_offset[a + 1]; ++i) {
      const double start = offset != nullptr ? offset[i] : 0.0;
      out[i] = rows.nnz() > 0 ? row_times_theta(rows, i, theta, start) : start;
    }
  }
}

void RowEncoding::add_example_potentials(int64_t n, std::span<const double> theta,
                                         std::span<double> potential) const {
  for_each_row_of_example(data_, n, [&](const SparseRows& rows, int64_t row, int64_t position) {
    if (rows.nnz() > 0)
      potential[position] = row_times_theta(rows, row, theta, potential[position]);
  });
}

void RowEncoding::add_example_moments(int64_t n, std::span<const double> weight,
                                      std::span<double> z) const {
  for_each_row_of_example(data_, n, [&](const SparseRows& rows, int64_t row, int64_t position) {
    if (rows.nnz() == 0) return;
    for (int64_t k = rows.ptr[row]; k < rows.ptr[row + 1]; ++k)
      z[rows.param[k]] += weight[position] * rows.value[k];
  });
}

void RowEncoding::add_truth_moments(const GroundTruth& truth, std::span<double> z) const {
  const auto add_rows = [&](const SparseRows& rows, const std::vector<int64_t>& positions,
                            int64_t first) {
    if (rows.nnz() == 0) return;  // format 2 without rows: no row pointers to read
    for (int64_t i : positions) {
      if (i == GroundTruth::kNone) continue;
      for (int64_t k = rows.ptr[i - first]; k < rows.ptr[i - first + 1]; ++k)
        z[rows.param[k]] += rows.value[k];
    }
  };
  add_rows(data_.var_features, truth.state, 0);
  add_rows(data_.factor_features, truth.entry, data_.num_states());
}

void RowEncoding::moments_by_rows(std::span<const double> weight, std::span<double> z) const {
  const int64_t params = data_.num_params;
  const int64_t blocks = static_cast<int64_t>(block_start_.size()) - 1;
#pragma omp parallel for schedule(dynamic)
  for (int64_t b = 0; b < blocks; ++b) {
    double* sums = block_sums_.data() + b * params;
    std::fill(sums, sums + params, 0.0);
    for_each_part(data_, block_start_[b], block_start_[b + 1],
                  [&](const SparseRows& rows, int64_t first, int64_t last, int64_t position) {
                    const double* w = weight.data() + position - first;
                    const int part = &rows == &data_.factor_features ? 1 : 0;
                    if (one_entry_per_row_[part]) {  // entry i is row i's only one
                      for (int64_t i = first; i < last; ++i)
                        sums[rows.param[i]] += w[i] * rows.value[i];
                      return;
                    }
                    for (int64_t i = first; i < last; ++i)
                      for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k)
                        sums[rows.param[k]] += w[i] * rows.value[k];
                  });
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < params; ++r) {
    double sum = 0.0;
    for (int64_t b = 0; b < blocks; ++b) sum += block_sums_[b * params + r];
    z[r] += sum;
  }
}

void RowEncoding::moments_by_params(std::span<const double> weight, std::span<double> z) const {
  const int64_t params = static_cast<int64_t>(param_ptr_.size()) - 1;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < params; ++r) {
    double sum = 0.0;
    for (int64_t k = param_ptr_[r]; k < param_ptr_[r + 1]; ++k)
      sum += weight[position_[k]] * value_[k];
    z[r] += sum;
  }
}

}  // namespace pdsp
