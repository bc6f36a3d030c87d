#include "pdsp/data/partition.hpp"

#include <algorithm>
#include <cmath>

namespace pdsp {

std::vector<int64_t> partition_by_cost(const std::vector<double>& cost, int parts) {
  const int64_t n = static_cast<int64_t>(cost.size());
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  std::vector<int64_t> bounds(static_cast<size_t>(parts) + 1, 0);
  bounds[parts] = n;
  int64_t cursor = 0;
  for (int part = 1; part < parts; ++part) {
    const double target = prefix[n] * part / parts;
    while (cursor < n && prefix[cursor + 1] <= target) ++cursor;
    // cursor: last boundary with prefix <= target; step over the crossing example if closer.
    int64_t boundary = cursor;
    if (cursor < n && std::abs(prefix[cursor + 1] - target) < std::abs(prefix[cursor] - target))
      boundary = cursor + 1;
    bounds[part] = std::max(boundary, bounds[part - 1]);
  }
  return bounds;
}

double partition_imbalance(const std::vector<double>& cost, const std::vector<int64_t>& bounds) {
  const size_t parts = bounds.size() - 1;
  double total = 0, largest = 0;
  for (size_t part = 0; part < parts; ++part) {
    double sum = 0;
    for (int64_t i = bounds[part]; i < bounds[part + 1]; ++i) sum += cost[i];
    total += sum;
    largest = std::max(largest, sum);
  }
  return total > 0 ? largest * static_cast<double>(parts) / total : 1.0;
}

Dataset load_rank_slice(const std::string& path, Communicator& comm, DatasetLayout* layout_out,
                        const std::function<void(const std::string&)>& on_stage) {
  if (on_stage) on_stage("scanning " + path);
  const DatasetLayout layout = scan_dataset(path, comm);
  const std::vector<int64_t> bounds = partition_by_cost(layout.cost, comm.size());
  if (on_stage)
    on_stage("reading and checking " + std::to_string(layout.num_examples()) +
             " examples in slices of " + std::to_string(comm.size()) + " rank(s)");
  Dataset slice;
  run_collectively(
      comm, [&] { slice = read_examples(layout, bounds[comm.rank()], bounds[comm.rank() + 1]); });
  slice.ranks = &comm;
  if (layout_out != nullptr) *layout_out = layout;
  return slice;
}

}  // namespace pdsp
