#pragma once
// A minimum s-t cut of a small directed graph with real capacities, by maximum flow (Dinic:
// breadth-first levels, then blocking flows along them). It is built for the many tiny graphs of
// the roof dual (binary_lp.hpp), so the same object is reset and refilled without reallocating.
#include <cstdint>
#include <vector>

namespace pdsp {

class MinCut {
 public:
  // Forgets every arc; nodes are 0 .. nodes - 1 besides the source and the sink.
  void reset(int nodes);
  int source() const { return nodes_; }
  int sink() const { return nodes_ + 1; }
  // An arc from -> to of capacity >= 0 (an arc of capacity 0 is skipped).
  void add_arc(int from, int to, double capacity);
  // The maximum flow from the source to the sink, which is the minimum cut's capacity.
  double solve();
  // After solve(): whether node v is on the source's side of a minimum cut (reachable from the
  // source through arcs with residual capacity).
  bool on_source_side(int v) const { return level_[v] >= 0; }

 private:
  struct Arc {
    int from, to;
    double residual;
  };
  void index_arcs();
  bool build_levels();
  double push(int v, double limit);

  int nodes_ = 0;
  double tolerance_ = 0;   // residuals below it count as saturated (round-off of the flows)
  std::vector<Arc> arcs_;  // arc k and its reverse k ^ 1
  // The arcs leaving node v are out_[first_out_[v] .. first_out_[v + 1]).
  std::vector<int> first_out_, out_;
  std::vector<int> level_, next_arc_, queue_;
};

}  // namespace pdsp
