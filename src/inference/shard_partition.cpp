#include "pdsp/inference/shard_partition.hpp"

#include <metis.h>

#include <algorithm>
#include <array>
#include <limits>

#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

struct Pair {
  int64_t low, offset;  // the smaller local variable and the distance to the other
};

// The example's factors of arity 2 as (smaller variable, distance), local to the example;
// false when a factor has an arity other than 1 or 2.
bool pairwise_factors(const Dataset& data, int64_t example, std::vector<Pair>& pairs) {
  const int64_t first = data.var_offset[example];
  for (int64_t a = data.factor_offset[example]; a < data.factor_offset[example + 1]; ++a) {
    const int64_t arity = data.arity(a);
    if (arity == 1) continue;
    if (arity != 2) return false;
    const int64_t u = data.factor_vars[data.factor_var_ptr[a]] - first;
    const int64_t v = data.factor_vars[data.factor_var_ptr[a] + 1] - first;
    pairs.push_back({std::min(u, v), std::abs(u - v)});
  }
  return true;
}

// Whether `pairs` are exactly the edges of a cols-wide row-major grid of `n` variables: each
// edge once, none wrapping around a row's end.
bool pairs_form_grid(const std::vector<Pair>& pairs, int64_t n, int64_t cols, bool diagonals) {
  const int64_t rows = n / cols;
  // Per direction (right, down, down-right, down-left): its offset and which columns it leaves.
  const std::array<int64_t, 4> offsets = {1, cols, cols + 1, cols - 1};
  const int directions = diagonals ? 4 : 2;
  std::vector<std::vector<char>> seen(directions, std::vector<char>(static_cast<size_t>(n), 0));
  std::array<int64_t, 4> count = {0, 0, 0, 0};
  for (const Pair& p : pairs) {
    const int d = static_cast<int>(
        std::find(offsets.begin(), offsets.begin() + directions, p.offset) - offsets.begin());
    if (d == directions) return false;
    const int64_t column = p.low % cols;
    const bool wraps = (d == 0 || d == 2) ? column == cols - 1 : (d == 3 && column == 0);
    if (wraps || seen[d][p.low]) return false;
    seen[d][p.low] = 1;
    ++count[d];
  }
  const int64_t expected[4] = {rows * (cols - 1), (rows - 1) * cols, (rows - 1) * (cols - 1),
                               (rows - 1) * (cols - 1)};
  for (int d = 0; d < directions; ++d)
    if (count[d] != expected[d]) return false;
  return true;
}

// Row bands x column bands whose product is `shards`, with the shortest cut; {0, 0} when no
// such pair fits the grid.
std::array<int64_t, 2> block_layout(const GridShape& grid, int shards) {
  std::array<int64_t, 2> best = {0, 0};
  int64_t best_cut = std::numeric_limits<int64_t>::max();
  // From the most bands down: on a tie, bands of whole rows, whose variables are contiguous.
  for (int64_t bands = shards; bands >= 1; --bands) {
    if (shards % bands != 0) continue;
    const int64_t columns = shards / bands;
    if (bands > grid.rows || columns > grid.cols) continue;
    const int64_t cut = (bands - 1) * grid.cols + (columns - 1) * grid.rows;
    if (cut < best_cut) {
      best_cut = cut;
      best = {bands, columns};
    }
  }
  return best;
}

// The band that holds `position` when `size` rows (or columns) are cut into `parts` bands whose
// sizes differ by at most one, the larger ones first.
int64_t band_of(int64_t position, int64_t size, int64_t parts) {
  const int64_t base = size / parts, larger = size % parts;  // the first `larger` get base + 1
  const int64_t split = larger * (base + 1);
  return position < split ? position / (base + 1) : larger + (position - split) / base;
}

void split_grid(const GridShape& grid, std::array<int64_t, 2> layout, ShardPartition& p) {
  for (int64_t r = 0; r < grid.rows; ++r) {
    const int64_t band = band_of(r, grid.rows, layout[0]);
    for (int64_t c = 0; c < grid.cols; ++c)
      p.shard_of[r * grid.cols + c] =
          static_cast<int32_t>(band * layout[1] + band_of(c, grid.cols, layout[1]));
  }
  p.method = "grid blocks " + std::to_string(layout[0]) + "x" + std::to_string(layout[1]) + " of " +
             std::to_string(grid.rows) + "x" + std::to_string(grid.cols);
}

// The interaction graph of one example in METIS's compressed form: a variable weighs its states
// plus the table entries of its factors (what its block update reads), an edge the number of
// factors its two variables share.
struct InteractionGraph {
  std::vector<idx_t> xadj, adjncy, adjwgt, vwgt;
};

// Two passes over the factors (count, then fill), each variable's list then sorted and its
// repeats merged in place: no list per variable, which cost 250 MB per million variables.
InteractionGraph interaction_graph(const Dataset& data, int64_t first_example, int64_t last_example,
                                   const std::string& where) {
  const int64_t first = data.var_offset[first_example];
  const int64_t n = data.var_offset[last_example] - first;
  const int64_t factor_begin = data.factor_offset[first_example],
                factor_end = data.factor_offset[last_example];
  std::vector<int64_t> start(static_cast<size_t>(n) + 1, 0), weight(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) weight[v] = data.card[first + v];
  for (int64_t a = factor_begin; a < factor_end; ++a) {
    const int64_t arity = data.arity(a);
    const int64_t entries = data.table_offset[a + 1] - data.table_offset[a];
    for (int64_t i = data.factor_var_ptr[a]; i < data.factor_var_ptr[a + 1]; ++i) {
      start[data.factor_vars[i] - first + 1] += arity - 1;
      weight[data.factor_vars[i] - first] += entries;
    }
  }
  for (int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
  if (start[n] > std::numeric_limits<idx_t>::max())
    throw InputError(where + ": " + std::to_string(start[n]) +
                     " variable pairs share a factor, beyond METIS's 32-bit indices");
  InteractionGraph g;
  g.adjncy.resize(static_cast<size_t>(start[n]));
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t a = factor_begin; a < factor_end; ++a)
    for (int64_t i = data.factor_var_ptr[a]; i < data.factor_var_ptr[a + 1]; ++i)
      for (int64_t j = data.factor_var_ptr[a]; j < data.factor_var_ptr[a + 1]; ++j)
        if (j != i)
          g.adjncy[next[data.factor_vars[i] - first]++] =
              static_cast<idx_t>(data.factor_vars[j] - first);
  // METIS sums the weights in 32 bits: scale them down to keep the total below 2^30.
  int64_t total = 0;
  for (int64_t w : weight) total += w;
  const int64_t scale = total / (int64_t{1} << 30) + 1;
  g.vwgt.resize(static_cast<size_t>(n));
  g.adjwgt.resize(g.adjncy.size());
  g.xadj.assign(1, 0);
  idx_t kept = 0;
  for (int64_t v = 0; v < n; ++v) {
    g.vwgt[v] = static_cast<idx_t>(std::max<int64_t>(1, weight[v] / scale));
    std::sort(g.adjncy.begin() + start[v], g.adjncy.begin() + start[v + 1]);
    for (int64_t i = start[v]; i < start[v + 1];) {
      int64_t same = i;
      while (same < start[v + 1] && g.adjncy[same] == g.adjncy[i]) ++same;
      g.adjncy[kept] = g.adjncy[i];
      g.adjwgt[kept++] = static_cast<idx_t>(same - i);
      i = same;
    }
    g.xadj.push_back(kept);
  }
  g.adjncy.resize(static_cast<size_t>(kept));
  g.adjwgt.resize(static_cast<size_t>(kept));
  return g;
}

// METIS k-way on the interaction graph.
// `where` names the file and the example in errors.
void split_with_metis(const Dataset& data, int64_t first, int64_t last, int shards,
                      const std::string& where, ShardPartition& p) {
  const int64_t n = data.var_offset[last] - data.var_offset[first];
  InteractionGraph g = interaction_graph(data, first, last, where);
  idx_t vertices = static_cast<idx_t>(n), constraints = 1, parts = shards, cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;  // METIS's own generator: the same split on every machine
  std::vector<idx_t> part(static_cast<size_t>(n));
  const int status = METIS_PartGraphKway(&vertices, &constraints, g.xadj.data(), g.adjncy.data(),
                                         g.vwgt.data(), nullptr, g.adjwgt.data(), &parts, nullptr,
                                         nullptr, options, &cut, part.data());
  if (status != METIS_OK)
    throw InputError(where + ": METIS could not split its " + std::to_string(n) +
                     " variables into " + std::to_string(shards) + " shards (status " +
                     std::to_string(status) + ")");
  for (int64_t v = 0; v < n; ++v) p.shard_of[v] = static_cast<int32_t>(part[v]);
  p.method = "metis";
}

}  // namespace

GridShape find_grid(const Dataset& data, int64_t example) {
  const int64_t n = data.var_offset[example + 1] - data.var_offset[example];
  std::vector<Pair> pairs;
  if (n < 4 || !pairwise_factors(data, example, pairs) || pairs.empty()) return {};
  // The row width is the largest distance (4-connected) or the middle one of the three beyond 1
  // (8-connected: down-left, down, down-right).
  int64_t largest = 0;
  for (const Pair& p : pairs) largest = std::max(largest, p.offset);
  for (const bool diagonals : {false, true}) {
    const int64_t cols = diagonals ? largest - 1 : largest;
    if (cols < (diagonals ? 3 : 2) || n % cols != 0 || n / cols < 2) continue;
    if (pairs_form_grid(pairs, n, cols, diagonals)) return {n / cols, cols, diagonals};
  }
  return {};
}

ShardPartition partition_example(const Dataset& data, int64_t first, int64_t last, int shards,
                                 const std::string& source) {
  const int64_t n = data.var_offset[last] - data.var_offset[first];
  std::string where = source + ": example";
  where.append(last - first > 1 ? "s " : " ").append(std::to_string(data.first_example + first));
  if (last - first > 1) where.append("-").append(std::to_string(data.first_example + last - 1));
  if (shards < 1)
    throw InputError(where + ": --shards must be at least 1, not " + std::to_string(shards));
  if (shards > n)
    throw InputError(where + ": " + std::to_string(shards) + " shards for its " +
                     std::to_string(n) + " variables: at most one shard per variable");
  ShardPartition p;
  p.shards = shards;
  p.shard_of.assign(static_cast<size_t>(n), 0);
  p.method = "whole";
  if (shards > 1) {
    // Several examples split as one are no grid, whatever each of them is.
    const GridShape grid = last - first == 1 ? find_grid(data, first) : GridShape{};
    const std::array<int64_t, 2> layout =
        grid.rows > 0 ? block_layout(grid, shards) : std::array<int64_t, 2>{0, 0};
    if (layout[0] > 0)
      split_grid(grid, layout, p);
    else
      split_with_metis(data, first, last, shards, where, p);
  }
  p.variables.assign(static_cast<size_t>(shards), 0);
  for (int32_t s : p.shard_of) ++p.variables[s];
  const int64_t first_var = data.var_offset[first];
  for (int64_t a = data.factor_offset[first]; a < data.factor_offset[last]; ++a) {
    const int32_t shard = p.shard_of[data.factor_vars[data.factor_var_ptr[a]] - first_var];
    for (int64_t i = data.factor_var_ptr[a] + 1; i < data.factor_var_ptr[a + 1]; ++i)
      if (p.shard_of[data.factor_vars[i] - first_var] != shard) {
        ++p.cut_factors;
        break;
      }
  }
  return p;
}

}  // namespace pdsp
