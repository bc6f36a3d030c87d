#include "pdsp/inference/shared_tables.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "pdsp/inference/table_ops.hpp"
#include "pdsp/inference/vector_math.hpp"

namespace pdsp {
namespace {

// weight[i] = exp(l[i] / tau - m) with m = max_i l[i] / tau, so that the largest weight is 1;
// returns m.
double scaled_weights(const double* l, int64_t n, double tau, double* weight) {
  const double inverse = 1.0 / tau;
  const double m = max_over(1, n, l[0] * inverse, [&](int64_t i) { return l[i] * inverse; });
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) weight[i] = std::exp(l[i] * inverse - m);
  return m;
}

// Fills the exp tables of `table` from its potentials at its temperature; false when a row or a
// column of u / tau spans more than kSharedTableRange, or holds a value that is not finite (the
// general kernels then meet it where the evaluation reports it).
bool fill(SharedTable& table) {
  const int64_t rows = table.rows, cols = table.cols;
  const double inverse = 1.0 / table.tau;
  std::vector<double> row_min(static_cast<size_t>(rows), INFINITY);
  std::vector<double> col_min(static_cast<size_t>(cols), INFINITY);
  table.row_max.assign(static_cast<size_t>(rows), -INFINITY);
  table.col_max.assign(static_cast<size_t>(cols), -INFINITY);
  for (int64_t s = 0; s < rows; ++s)
    for (int64_t t = 0; t < cols; ++t) {
      const double x = table.u[s * cols + t] * inverse;
      if (!std::isfinite(x)) return false;
      table.row_max[s] = std::max(table.row_max[s], x);
      row_min[s] = std::min(row_min[s], x);
      table.col_max[t] = std::max(table.col_max[t], x);
      col_min[t] = std::min(col_min[t], x);
    }
  for (int64_t s = 0; s < rows; ++s)
    if (table.row_max[s] - row_min[s] > kSharedTableRange) return false;
  for (int64_t t = 0; t < cols; ++t)
    if (table.col_max[t] - col_min[t] > kSharedTableRange) return false;
  for (std::vector<double>* e : {&table.by_row, &table.by_row_transposed, &table.by_col})
    e->resize(static_cast<size_t>(rows * cols));
  for (int64_t s = 0; s < rows; ++s)
    for (int64_t t = 0; t < cols; ++t) {
      const double x = table.u[s * cols + t] * inverse;
      table.by_row[s * cols + t] = table.by_row_transposed[t * rows + s] =
          std::exp(x - table.row_max[s]);
      table.by_col[s * cols + t] = std::exp(x - table.col_max[t]);
    }
  return true;
}

}  // namespace

void SharedTable::message(bool first, const double* other_message, double* out,
                          double* weight) const {
  const int64_t n = first ? cols : rows;  // the other variable's states
  const int64_t m = first ? rows : cols;
  const double* table = first ? by_row_transposed.data() : by_col.data();
  const double* shift = first ? row_max.data() : col_max.data();
  const double top = scaled_weights(other_message, n, tau, weight);
  std::fill(out, out + m, 0.0);
  add_weighted_rows(
      n, m, [table, m](int64_t i) { return table + i * m; },
      [weight](int64_t i) { return weight[i]; }, out);
#pragma omp simd
  for (int64_t s = 0; s < m; ++s) out[s] = tau * (shift[s] + top + std::log(out[s]));
}

double SharedTable::normalise(const double* l0, const double* l1, double* x, double* weight,
                              double* inner, double* mass) const {
  const double top = scaled_weights(l1, cols, tau, weight);
  const double inverse = 1.0 / tau;
  double largest = row_max[0] + l0[0] * inverse;
  for (int64_t s = 1; s < rows; ++s) largest = std::max(largest, row_max[s] + l0[s] * inverse);
#pragma omp simd
  for (int64_t s = 0; s < rows; ++s) x[s] = std::exp(row_max[s] + l0[s] * inverse - largest);
  std::fill(inner, inner + rows, 0.0);
  const double* table = by_row_transposed.data();
  add_weighted_rows(
      cols, rows, [table, this](int64_t i) { return table + i * rows; },
      [weight](int64_t i) { return weight[i]; }, inner);
  double z = 0.0;
  for (int64_t s = 0; s < rows; ++s) z += x[s] * inner[s];
  *mass = z;
  return largest + top;
}

double SharedTable::objective(const double* l0, const double* l1, double* x, double* weight,
                              double* inner) const {
  double z = 0.0;
  const double shift = normalise(l0, l1, x, weight, inner, &z);
  return tau * (shift + std::log(z));
}

double SharedTable::beliefs(const double* l0, const double* l1, double* marginals, double* folded,
                            double* entropy_but_table, double* x, double* weight,
                            double* inner) const {
  double z = 0.0;
  const double shift = normalise(l0, l1, x, weight, inner, &z);
  const double objective = tau * (shift + std::log(z));
  // b(s, t) = p(s) E(s, t) q(t) with p = x / z and q = weight: its marginals are p (E q), where
  // E q = inner, and q (E' p).
  double* first = marginals;
  double* second = marginals + rows;
  double* p = folded;
  double* q = p + rows;
  const double inverse = 1.0 / z;
  for (int64_t s = 0; s < rows; ++s) {
    p[s] = x[s] * inverse;
    first[s] = p[s] * inner[s];
  }
  std::copy(weight, weight + cols, q);
  std::fill(second, second + cols, 0.0);
  const double* table = by_row.data();
  const int64_t n = cols;
  add_weighted_rows(
      rows, cols, [table, n](int64_t s) { return table + s * n; }, [p](int64_t s) { return p[s]; },
      second);
#pragma omp simd
  for (int64_t t = 0; t < cols; ++t) second[t] *= q[t];
  // tau H(b) = smax - sum_{s,t} b(s, t) (u(s, t) + l0(s) + l1(t)), from log b = (score - smax) /
  // tau, without a log per entry; the sum over u is the table's part that fold() adds.
  double expected = 0.0;
  for (int64_t s = 0; s < rows; ++s) expected += first[s] * l0[s];
  for (int64_t t = 0; t < cols; ++t) expected += second[t] * l1[t];
  *entropy_but_table = objective - expected;
  return objective;
}

SharedPairwiseTables::SharedPairwiseTables(const Dataset& data, const CountingNumbers& counting)
    : data_(data) {
  const RegionTypes& types = data.factor_types;
  if (!types.present) return;
  const RowPointers& rows = data.factor_features.ptr;
  std::map<std::tuple<int32_t, int64_t, int64_t, double>, int32_t> index;
  int64_t shared = 0;
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    const int32_t type = types.type[a];
    if (type < 0 || types.dim[type] != 0 || data.arity(a) != 2) continue;
    // Format 1 rows would add to this factor's table only.
    const int64_t begin = data.table_offset[a], end = data.table_offset[a + 1];
    // (Read only when some factor has rows: see row_pointers.hpp.)
    if (data.factor_features.nnz() > 0 && static_cast<int64_t>(rows.size()) > end &&
        rows[begin] != rows[end])
      continue;
    const int64_t first = data.factor_var_ptr[a];
    const auto key =
        std::make_tuple(type, int64_t{data.card[data.factor_vars[first]]},
                        int64_t{data.card[data.factor_vars[first + 1]]}, counting.factor[a]);
    auto [it, added] = index.emplace(key, static_cast<int32_t>(tables_.size()));
    if (added) {
      SharedTable& table = tables_.emplace_back();
      std::tie(table.type, table.rows, table.cols, table.counting) = key;
      table.representative = a;
    }
    if (table_of_.empty()) table_of_.assign(static_cast<size_t>(data.num_factors()), -1);
    table_of_[a] = it->second;
    ++shared;
  }
  // None at all (every typed factor reads an observation row), or tables that factors hardly
  // share (counting numbers of each factor's own), which would double the memory of the
  // potentials for little gain.
  if (shared == 0 || static_cast<int64_t>(tables_.size()) * 2 > shared) {
    tables_.clear();
    table_of_.clear();
    return;
  }
  others_.assign(static_cast<size_t>(data.num_factors()), 0);
  folded_.assign(static_cast<size_t>(data.num_factors()), 0);
  folded_offset_.assign(static_cast<size_t>(data.num_factors()), 0);
  int64_t size = 0;
  for (int64_t a = 0; a < data.num_factors(); ++a) {
    others_[a] = representative(a) != a;
    folded_offset_[a] = size;
    if (table_of_[a] >= 0) size += tables_[table_of_[a]].folded_size();
  }
  folded_beliefs_.resize(static_cast<size_t>(size));
}

void SharedPairwiseTables::rebuild(const double* potential, double epsilon) {
  bool changed = folded_flags_stale_;
  for (SharedTable& table : tables_) {
    table.tau = epsilon * table.counting;
    table.u = potential ? potential + data_.num_states() + data_.table_offset[table.representative]
                        : nullptr;
    const bool usable = potential && table.tau != 0.0 && fill(table);
    changed = changed || usable != table.usable;
    table.usable = usable;
  }
  // The flags follow the tables' usability, which seldom changes: a stochastic learner rebuilds
  // after each example, and a pass over every factor would cost more than the visit.
  if (!changed) return;
  for (size_t a = 0; a < folded_.size(); ++a)
    folded_[a] = table_of_[a] >= 0 && tables_[table_of_[a]].usable;
  folded_flags_stale_ = false;
}

double SharedPairwiseTables::fold(std::span<const int64_t> examples) {
  bool any_usable = false;
  for (SharedTable& table : tables_) {
    table.belief_sum.assign(table.usable ? table.rows * table.cols : 0, 0.0);
    any_usable = any_usable || table.usable;
  }
  if (!any_usable) return 0.0;
  // Only the factors this rank owns: a shard's copies of cut factors are their owners' to count.
  const auto owned = std::min(folded_.size(), static_cast<size_t>(data_.owned_factors()));
  const auto add_factors = [&](size_t first, size_t last) {
    for (size_t a = first; a < std::min(last, owned); ++a) add_folded(a);
  };
  if (examples.empty()) add_factors(0, owned);
  for (int64_t n : examples)
    add_factors(static_cast<size_t>(data_.factor_offset[n]),
                static_cast<size_t>(data_.factor_offset[n + 1]));
  return table_part();
}

void SharedPairwiseTables::add_folded(size_t a) {
  if (!folded_[a]) return;
  SharedTable& table = tables_[table_of_[a]];
  const int64_t rows = table.rows, cols = table.cols;
  const double* p = folded_beliefs(static_cast<int64_t>(a));
  const double* q = p + rows;
  for (int64_t s = 0; s < rows; ++s) {
    double* sum = table.belief_sum.data() + s * cols;
    const double weight = p[s];
#pragma omp simd
    for (int64_t t = 0; t < cols; ++t) sum[t] += weight * q[t];
  }
}

double SharedPairwiseTables::table_part() {
  double table_part = 0.0;
  for (SharedTable& table : tables_) {
    // b(s, t) = p(s) E(s, t) q(t): E multiplies the sum of the outer products once per table.
    double* sum = table.belief_sum.data();
    const double* e = table.by_row.data();
    const double* u = table.u;
    const int64_t entries = static_cast<int64_t>(table.belief_sum.size());
#pragma omp simd reduction(+ : table_part)
    for (int64_t i = 0; i < entries; ++i) {
      sum[i] *= e[i];
      table_part += sum[i] * u[i];
    }
  }
  return table_part;
}

void SharedPairwiseTables::unfold(int64_t a, double* out) const {
  const SharedTable& table = tables_[table_of_[a]];
  const int64_t rows = table.rows, cols = table.cols;
  const double* p = folded_beliefs(a);
  const double* q = p + rows;
  const double* e = table.by_row.data();
  for (int64_t s = 0; s < rows; ++s)
#pragma omp simd
    for (int64_t t = 0; t < cols; ++t) out[s * cols + t] = p[s] * e[s * cols + t] * q[t];
}

void SharedPairwiseTables::add_moments(double* z) const {
  for (const SharedTable& table : tables_) {
    double* block = z + data_.factor_types.param_offset[table.type];
    for (size_t i = 0; i < table.belief_sum.size(); ++i) block[i] += table.belief_sum[i];
  }
}

}  // namespace pdsp
