#pragma once
// Pairwise factors whose table is a type's shared table (format 2: a factor type of dim 0 and no
// format 1 rows, so u_a(s, t) = theta[offset + s * cols + t] for every factor of the type; the
// 26 x 26 transitions of OCR). At temperature tau, exp(u / tau) is then the same for every such
// factor, and each soft-max over the table becomes a small matrix-vector product in the
// probability domain (cols exps and one log per state instead of rows x cols exps):
//   smax_tau over t of u(s, t) + l(t) = tau * (r_s + m + log sum_t E(s, t) exp(l(t) / tau - m))
// with E(s, t) = exp(u(s, t) / tau - r_s), r_s = max_t u(s, t) / tau, m = max_t l(t) / tau.
// Every row of E has its largest entry 1 and the largest weight exp(.. - m) is 1, so each sum is
// at least exp(-(range of row s of u / tau)); a table whose rows or columns span more than
// kSharedTableRange at this temperature (small tau, large potentials) stays in the log domain.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"

namespace pdsp {

// The widest range of u / tau along a row or column that the probability domain takes: its sums
// stay above exp(-500), so that what underflows (below exp(-708)) is far below their rounding.
inline constexpr double kSharedTableRange = 500.0;

// One shared table at one temperature: the factors of one type, shape and c_a.
struct SharedTable {
  int32_t type = -1;
  int64_t rows = 0, cols = 0;   // the cardinalities of the factors' first and second variables
  int64_t representative = -1;  // the first factor of the slice with this table
  double counting = 0;          // c_a of these factors
  double tau = 0;
  bool usable = false;        // at this temperature and these potentials: within the range
  const double* u = nullptr;  // the table (the representative's potentials)
  std::vector<double> row_max, col_max;  // r_s and c_t = max_s u(s, t) / tau
  // E(s, t) at [s * cols + t] and at [t * rows + s], and exp(u(s, t) / tau - c_t) at
  // [s * cols + t]: each product runs as sums of contiguous rows scaled by one weight each,
  // which vectorise without a horizontal reduction per state.
  std::vector<double> by_row, by_row_transposed, by_col;

  // mu(s) = smax_tau over the other variable's states of u + other_message, for the factor's
  // first variable (`first`) or its second; `weight` is scratch of the other's cardinality.
  void message(bool first, const double* other_message, double* out, double* weight) const;
  // smax_tau over (s, t) of u(s, t) + l0(s) + l1(t); `x` and `inner` are scratch of rows
  // entries, `weight` of cols.
  double objective(const double* l0, const double* l1, double* x, double* weight,
                   double* inner) const;
  // The same, with the beliefs b(s, t) = p(s) E(s, t) q(t): their marginals of the first and
  // the second variable at `marginals` (rows + cols entries), p and q, their folded form, at
  // `folded`, and tau H(b) + sum b u, the entropy term but for the table's part, at
  // `entropy_but_table`: fold() subtracts the table's part summed over the factors at once.
  double beliefs(const double* l0, const double* l1, double* marginals, double* folded,
                 double* entropy_but_table, double* x, double* weight, double* inner) const;
  // A factor's folded beliefs: p and q, rows + cols entries instead of rows x cols.
  int64_t folded_size() const { return rows + cols; }

  // sum of the beliefs of the factors folded at the last evaluation, [s * cols + t] (fold()).
  std::vector<double> belief_sum;

 private:
  // weight[t] = exp(l1(t) / tau - m), x[s] = exp(r_s + l0(s) / tau - M) and
  // inner[s] = sum_t E(s, t) weight[t]; returns M + m and sets *mass to the normaliser's sum
  // sum_s x[s] inner[s] (at least exp(-range)).
  double normalise(const double* l0, const double* l1, double* x, double* weight, double* inner,
                   double* mass) const;
};

class SharedPairwiseTables {
 public:
  SharedPairwiseTables(const Dataset& data, const CountingNumbers& counting);

  // Recomputes every table from `potential` (the layout [states | table entries]) at `epsilon`:
  // after new potentials and after a change of temperature. Null: no table is usable.
  void rebuild(const double* potential, double epsilon);
  // Factor a's table when a has one that is usable now, else null (the general kernels then).
  const SharedTable* of(int64_t a) const {
    if (table_of_.empty() || table_of_[a] < 0) return nullptr;
    const SharedTable& table = tables_[table_of_[a]];
    return table.usable ? &table : nullptr;
  }
  bool empty() const { return tables_.empty(); }
  // The factor whose table stands for a's (a itself when a has no shared table).
  int64_t representative(int64_t a) const {
    return table_of_.empty() || table_of_[a] < 0 ? a : tables_[table_of_[a]].representative;
  }
  // [factors] 1 for a factor with a shared table that is not its representative (empty when no
  // factor has one).
  const std::vector<uint8_t>& others() const { return others_; }

  // The beliefs of a factor whose table is usable are written in the folded form (SharedTable::
  // beliefs) instead of a table per factor: of the beliefs only their marginals (the violation,
  // checked as they are computed) and their sum over the factors of a table (the moments) are
  // read, and the tables were, on OCR, a third of an evaluation's memory traffic (and the
  // marginals kept beside p and q a third of a 5-million-parameter chain's memory per token,
  // issue 66). [factors] 1 for such a factor at the
  // current potentials and temperature (empty when no factor has a shared table).
  const std::vector<uint8_t>& folded() const { return folded_; }
  // Factor a's folded beliefs (a must be folded): written by the const kernels, each factor its
  // own entries, as they write the belief array they are passed.
  double* folded_beliefs(int64_t a) const { return folded_beliefs_.data() + folded_offset_[a]; }
  // Sums the folded beliefs of every table's factors into its belief_sum, in factor order (the
  // same for any thread count); returns sum over the tables of sum_{s,t} u(s, t) belief_sum(s, t),
  // the part of the dual that SharedTable::beliefs leaves out. With `examples`, only their
  // factors (the examples an evaluation covered).
  double fold(std::span<const int64_t> examples = {});
  // z[param] += belief_sum: a table's entry (s, t) is parameter offset(type) + s * cols + t.
  void add_moments(double* z) const;
  // Factor a's folded beliefs written out as its table, b(s, t) = p(s) E(s, t) q(t), at `table`
  // (a must be folded; for what needs the beliefs of single factors, as the certificate at
  // eps = 0 does).
  void unfold(int64_t a, double* table) const;

 private:
  void add_folded(size_t a);  // factor a's folded beliefs into its table's belief_sum
  double table_part();        // fold()'s return value, after the belief_sum are complete

  const Dataset& data_;
  std::vector<SharedTable> tables_;
  std::vector<int32_t> table_of_;  // [factors] an index into tables_ or -1; empty if none has one
  std::vector<uint8_t> others_;
  std::vector<uint8_t> folded_;
  bool folded_flags_stale_ = true;      // folded_ not yet set from the tables' usability
  std::vector<int64_t> folded_offset_;  // [factors] where a factor's folded beliefs start
  mutable std::vector<double> folded_beliefs_;
};

}  // namespace pdsp
