#include "pdsp/inference/min_cut.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pdsp {

void MinCut::reset(int nodes) {
  nodes_ = nodes;
  tolerance_ = 0;
  arcs_.clear();
}

void MinCut::add_arc(int from, int to, double capacity) {
  if (!(capacity > 0)) return;
  arcs_.push_back({from, to, capacity});
  arcs_.push_back({to, from, 0.0});
  // Flows are sums and differences of capacities: anything below this is their round-off.
  tolerance_ = std::max(tolerance_, 1e-13 * capacity);
}

// The arcs by the node they leave (a counting sort), once the graph is complete.
void MinCut::index_arcs() {
  const size_t nodes = static_cast<size_t>(nodes_) + 2;
  first_out_.assign(nodes + 1, 0);
  for (const Arc& arc : arcs_) ++first_out_[arc.from + 1];
  for (size_t v = 0; v < nodes; ++v) first_out_[v + 1] += first_out_[v];
  out_.resize(arcs_.size());
  next_arc_.assign(first_out_.begin(), first_out_.end() - 1);
  for (int k = 0; k < static_cast<int>(arcs_.size()); ++k) out_[next_arc_[arcs_[k].from]++] = k;
  level_.resize(nodes);
}

bool MinCut::build_levels() {
  std::fill(level_.begin(), level_.end(), -1);
  queue_.assign(1, source());
  level_[source()] = 0;
  for (size_t head = 0; head < queue_.size(); ++head) {
    const int v = queue_[head];
    for (int i = first_out_[v]; i < first_out_[v + 1]; ++i) {
      const Arc& arc = arcs_[out_[i]];
      if (arc.residual > tolerance_ && level_[arc.to] < 0) {
        level_[arc.to] = level_[v] + 1;
        queue_.push_back(arc.to);
      }
    }
  }
  return level_[sink()] >= 0;
}

// Sends up to `limit` from v towards the sink along arcs that go one level down, as many paths
// as fit (a blocking flow of Dinic's method); next_arc_ skips arcs already saturated or dead.
double MinCut::push(int v, double limit) {
  if (v == sink()) return limit;
  double sent = 0;
  for (int& i = next_arc_[v]; i < first_out_[v + 1]; ++i) {
    Arc& arc = arcs_[out_[i]];
    if (arc.residual <= tolerance_ || level_[arc.to] != level_[v] + 1) continue;
    const double pushed = push(arc.to, std::min(limit - sent, arc.residual));
    if (pushed > 0) {
      arc.residual -= pushed;
      arcs_[out_[i] ^ 1].residual += pushed;
      sent += pushed;
      if (limit - sent <= tolerance_) break;  // this arc may carry more: keep it
    }
  }
  return sent;
}

double MinCut::solve() {
  index_arcs();
  double flow = 0;
  while (build_levels()) {
    std::copy(first_out_.begin(), first_out_.end() - 1, next_arc_.begin());
    flow += push(source(), std::numeric_limits<double>::infinity());
  }
  // The last search reached every node on the source's side and not the sink: its levels are
  // the cut.
  return flow;
}

}  // namespace pdsp
