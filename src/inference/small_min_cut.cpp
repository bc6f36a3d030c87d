#include "pdsp/inference/small_min_cut.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pdsp {

void SmallMinCut::reset(int nodes) {
  if (nodes < 0 || nodes > kMaxNodes)
    throw std::invalid_argument("SmallMinCut: " + std::to_string(nodes) + " nodes, at most " +
                                std::to_string(kMaxNodes));
  nodes_ = nodes;
  size_ = nodes + 2;
  tolerance_ = 0;
  residual_.assign(static_cast<size_t>(size_ * size_), 0.0);
}

void SmallMinCut::add_arc(int from, int to, double capacity) {
  if (!(capacity > 0)) return;
  residual(from, to) += capacity;
  // Flows are sums and differences of capacities: anything below this is their round-off.
  tolerance_ = std::max(tolerance_, 1e-13 * capacity);
}

bool SmallMinCut::build_levels() {
  uint64_t frontier = bit(source());
  uint64_t visited = frontier;
  level_set_[0] = frontier;
  level_[source()] = 0;
  for (int depth = 1; frontier != 0; ++depth) {
    uint64_t next = 0;
    for (uint64_t f = frontier; f != 0; f &= f - 1) next |= open_[std::countr_zero(f)];
    next &= ~visited;
    if (next & bit(sink())) {
      // The other nodes of the sink's level lead nowhere in this phase.
      level_set_[depth] = bit(sink());
      level_[sink()] = depth;
      return true;
    }
    level_set_[depth] = next;
    for (uint64_t f = next; f != 0; f &= f - 1) level_[std::countr_zero(f)] = depth;
    visited |= next;
    frontier = next;
  }
  reached_ = visited;
  return false;
}

double SmallMinCut::push(int v, double limit) {
  if (v == sink()) return limit;
  double sent = 0;
  uint64_t next = open_[v] & level_set_[level_[v] + 1] & alive_;
  while (next != 0) {
    const int w = std::countr_zero(next);
    double& forward = residual(v, w);
    const double pushed = push(w, std::min(limit - sent, forward));
    if (pushed > 0) {
      forward -= pushed;
      double& backward = residual(w, v);
      backward += pushed;
      if (backward > tolerance_) open_[w] |= bit(v);
      if (forward <= tolerance_) open_[v] &= ~bit(w);
      sent += pushed;
      if (limit - sent <= tolerance_) return sent;  // this arc may carry more: keep it
    }
    // Here the arc is saturated or w passes nothing more (push cleared its alive bit).
    next &= open_[v] & alive_ & ~bit(w);
  }
  alive_ &= ~bit(v);
  return sent;
}

double SmallMinCut::solve() {
  for (int v = 0; v < size_; ++v) {
    uint64_t open = 0;
    for (int w = 0; w < size_; ++w)
      if (residual(v, w) > tolerance_) open |= bit(w);
    open_[v] = open;
  }
  double flow = 0;
  while (build_levels()) {
    alive_ = ~uint64_t{0};
    flow += push(source(), INFINITY);
  }
  // The last search reached every node on the source's side and not the sink.
  return flow;
}

}  // namespace pdsp
