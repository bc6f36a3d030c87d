#include "pdsp/learning/feature_index.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/data/allocation.hpp"
#include "pdsp/learning/parameter_memory.hpp"

namespace pdsp {

namespace {

// Blocks of the by-rows order: at most kMaxBlocks, at least kMinBlockEntries entries each (small
// data sets do not pay for the block sums), and at least kEntriesPerBlockSum entries per block
// and parameter: zeroing and adding the block sums then costs at most 1/8 of a pass over the
// entries. Fewer entries per parameter than that, and the transposed copy is the better order.
constexpr int64_t kMaxBlocks = 64;
constexpr int64_t kMinBlockEntries = int64_t{1} << 14;
constexpr int64_t kEntriesPerBlockSum = 8;

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

// out[i] = offset[i] (or 0) + row i of `rows` times theta, for every row.
void rows_times_theta(const SparseRows& rows, bool one_entry_per_row, std::span<const double> theta,
                      const double* offset, double* out) {
  const int64_t count = rows.num_rows();
  if (one_entry_per_row) {
    const int32_t* param = rows.param.data();
    const double* value = rows.value.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i)
      out[i] = (offset != nullptr ? offset[i] : 0.0) + theta[param[i]] * value[i];
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    double u = offset != nullptr ? offset[i] : 0.0;
    for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k)
      u += theta[rows.param[k]] * rows.value[k];
    out[i] = u;
  }
}

// The largest sum of |value| over the entries of one row.
double largest_abs_row_sum(const SparseRows& rows) {
  double largest = 0.0;
  for (int64_t i = 0; i < rows.num_rows(); ++i) {
    double sum = 0.0;
    for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k) sum += std::abs(rows.value[k]);
    largest = std::max(largest, sum);
  }
  return largest;
}

}  // namespace

FeatureIndex::FeatureIndex(const Dataset& data, Order order)
    : data_(data),
      typed_{TypedEncoding(data, TypedEncoding::Kind::Variables),
             TypedEncoding(data, TypedEncoding::Kind::Factors)},
      order_(order),
      one_entry_per_row_{has_one_entry_per_row(data.var_features),
                         has_one_entry_per_row(data.factor_features)},
      largest_row_sum_(
          std::max(largest_abs_row_sum(data.var_features) + typed_[0].largest_row_sum(),
                   largest_abs_row_sum(data.factor_features) + typed_[1].largest_row_sum())) {
  const std::string source = data.source();
  check_parameter_memory(data, source);
  const int64_t entries = num_entries(data);
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

void FeatureIndex::moments(std::span<const double> weight, std::span<double> z) const {
  if (order_ == Order::ByRows)
    moments_by_rows(weight, z);
  else
    moments_by_params(weight, z);
  for (const TypedEncoding& part : typed_) part.add_moments(weight, z);
}

void FeatureIndex::moments_by_rows(std::span<const double> weight, std::span<double> z) const {
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
    z[r] = sum;
  }
}

void FeatureIndex::moments_by_params(std::span<const double> weight, std::span<double> z) const {
  const int64_t params = static_cast<int64_t>(param_ptr_.size()) - 1;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < params; ++r) {
    double sum = 0.0;
    for (int64_t k = param_ptr_[r]; k < param_ptr_[r + 1]; ++k)
      sum += weight[position_[k]] * value_[k];
    z[r] = sum;
  }
}

namespace {

// The feature row of position i of the potential layout.
struct Row {
  const SparseRows& features;
  int64_t row;
};

Row row_of(const Dataset& data, int64_t i) {
  return i < data.num_states() ? Row{data.var_features, i}
                               : Row{data.factor_features, i - data.num_states()};
}

double potential_of(const Dataset& data, int64_t i, std::span<const double> theta,
                    std::span<const double> loss) {
  const Row r = row_of(data, i);
  double u = (i < data.num_states() && !loss.empty()) ? loss[i] : 0.0;
  for (int64_t k = r.features.ptr[r.row]; k < r.features.ptr[r.row + 1]; ++k)
    u += theta[r.features.param[k]] * r.features.value[k];
  return u;
}

// Calls visit(i) for every position of example n: its states, then its table entries.
template <class Visit>
void for_each_position(const Dataset& data, int64_t n, Visit&& visit) {
  const int64_t states = data.num_states();
  for (int64_t i = data.state_offset[data.var_offset[n]];
       i < data.state_offset[data.var_offset[n + 1]]; ++i)
    visit(i);
  for (int64_t t = data.table_offset[data.factor_offset[n]];
       t < data.table_offset[data.factor_offset[n + 1]]; ++t)
    visit(states + t);
}

// The position of factor a's labelled joint state among the table entries.
int64_t labelled_entry(const Dataset& data, const FactorGraph& graph, int64_t a) {
  int64_t t = 0;
  for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
    t += data.label[data.factor_vars[e]] * graph.stride_of(e);
  return data.table_offset[a] + t;
}

void add_row(const SparseRows& rows, int64_t i, std::span<double> z) {
  for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k) z[rows.param[k]] += rows.value[k];
}

}  // namespace

void ground_truth_moments(const Dataset& data, const FactorGraph& graph, std::span<double> z) {
  std::fill(z.begin(), z.end(), 0.0);
  for (int64_t v = 0; v < data.num_vars(); ++v)
    add_row(data.var_features, data.state_offset[v] + data.label[v], z);
  for (int64_t a = 0; a < data.num_factors(); ++a)
    add_row(data.factor_features, labelled_entry(data, graph, a), z);
  if (data.is_compact()) {
    const std::vector<double> weight = ground_truth_weights(data, graph);
    for (auto kind : {TypedEncoding::Kind::Variables, TypedEncoding::Kind::Factors})
      TypedEncoding(data, kind).add_moments(weight, z);
  }
}

std::vector<double> ground_truth_weights(const Dataset& data, const FactorGraph& graph) {
  std::vector<double> weight(static_cast<size_t>(data.num_states() + data.num_table_entries()),
                             0.0);
  for (int64_t v = 0; v < data.num_vars(); ++v) weight[data.state_offset[v] + data.label[v]] = 1.0;
  for (int64_t a = 0; a < data.num_factors(); ++a)
    weight[data.num_states() + labelled_entry(data, graph, a)] = 1.0;
  return weight;
}

void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential) {
  // The two parts of the layout as two plain loops over their rows: this runs at every trial of
  // the step search, and a branch per position would halve its speed.
  rows_times_theta(data.var_features, false, theta, loss.empty() ? nullptr : loss.data(),
                   potential.data());
  rows_times_theta(data.factor_features, false, theta, nullptr,
                   potential.data() + data.num_states());
  for (auto kind : {TypedEncoding::Kind::Variables, TypedEncoding::Kind::Factors})
    TypedEncoding(data, kind).add_potentials(theta, potential);
}

void FeatureIndex::potentials(std::span<const double> theta, std::span<const double> loss,
                              std::span<double> potential) const {
  rows_times_theta(data_.var_features, one_entry_per_row_[0], theta,
                   loss.empty() ? nullptr : loss.data(), potential.data());
  rows_times_theta(data_.factor_features, one_entry_per_row_[1], theta, nullptr,
                   potential.data() + data_.num_states());
  for (const TypedEncoding& part : typed_) part.add_potentials(theta, potential);
}

void FeatureIndex::example_potentials(int64_t n, std::span<const double> theta,
                                      std::span<const double> loss,
                                      std::span<double> potential) const {
  for_each_position(data_, n,
                    [&](int64_t i) { potential[i] = potential_of(data_, i, theta, loss); });
  for (const TypedEncoding& part : typed_) part.add_example_potentials(n, theta, potential);
}

void FeatureIndex::add_example_moments(int64_t n, std::span<const double> weight,
                                       std::span<double> z) const {
  for_each_position(data_, n, [&](int64_t i) {
    const Row r = row_of(data_, i);
    for (int64_t k = r.features.ptr[r.row]; k < r.features.ptr[r.row + 1]; ++k)
      z[r.features.param[k]] += weight[i] * r.features.value[k];
  });
  for (const TypedEncoding& part : typed_) part.add_example_moments(n, weight, z);
}

}  // namespace pdsp
