#pragma once
// MinCut's job (min_cut.hpp) for graphs of at most 64 nodes, source and sink included: the
// roof-dual graphs of examples of up to 31 binary variables (yeast's 14 labels, scene's 6), which
// the structured SVM learners cut once per step and twice per objective evaluation. The residual
// capacities are a dense matrix and each node's arcs with residual capacity one bit of a 64-bit
// mask, so Dinic's breadth-first levels and blocking flows walk bit masks instead of arc lists
// (yeast: ssvm-fw passes 1.5 times faster, the arc lists' cut having taken 37% of them;
// docs/benchmarks.md).
// Parallel arcs are merged into one of their summed capacity, which leaves every cut's capacity
// as it was. The source side is that of any maximum flow: the nodes the source still reaches.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pdsp {

class SmallMinCut {
 public:
  static constexpr int kMaxNodes = 62;  // besides the source and the sink

  // Forgets every arc; nodes are 0 .. nodes - 1 (at most kMaxNodes) besides the source and sink.
  void reset(int nodes);
  int source() const { return nodes_; }
  int sink() const { return nodes_ + 1; }
  // An arc from -> to of capacity >= 0 (an arc of capacity 0 is skipped).
  void add_arc(int from, int to, double capacity);
  // The maximum flow from the source to the sink, which is the minimum cut's capacity.
  double solve();
  // After solve(): whether node v is on the source's side of a minimum cut.
  bool on_source_side(int v) const { return (reached_ >> v) & 1u; }

 private:
  static uint64_t bit(int v) { return uint64_t{1} << v; }
  double& residual(int from, int to) {
    return residual_[static_cast<std::size_t>(from * size_ + to)];
  }
  // Levels by breadth from the source over arcs with residual capacity; false when the sink is
  // not reached (reached_ then holds every node reached).
  bool build_levels();
  // Sends up to `limit` from v to the sink along arcs one level down (Dinic's blocking flow).
  double push(int v, double limit);

  int nodes_ = 0;
  int size_ = 2;          // nodes_ + 2: the matrix's side
  double tolerance_ = 0;  // residuals at or below it count as saturated (round-off of the flows)
  std::vector<double> residual_;          // [size_ x size_], row: the arc's tail
  std::array<uint64_t, 64> open_{};       // bit w of open_[v]: residual(v, w) > tolerance_
  std::array<uint64_t, 65> level_set_{};  // the nodes of each level
  std::array<int, 64> level_{};
  uint64_t alive_ = 0;    // nodes that may still pass flow to the sink in this phase
  uint64_t reached_ = 0;  // the source's side once solve() has returned
};

}  // namespace pdsp
