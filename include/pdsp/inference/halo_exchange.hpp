#pragma once
// What one shard of a split example (example_shard.hpp) exchanges with the ranks that hold the
// example's other shards: after each colour class of a sweep, the messages its variables of that
// class sent into cut factors; after the variable beliefs of an evaluation, the beliefs of the
// variables in each other's halo. Point to point with the neighbours only, never collective, so
// ranks holding whole examples go on undisturbed.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/kernels.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class HaloExchange {
 public:
  // `data` is the shard's slice (data.shard set) and `graph` its own; `kernels` the ones whose
  // message state moves.
  HaloExchange(const Dataset& data, const FactorGraph& graph, const Kernels& kernels,
               Communicator& comm);

  // Colour class `colour` of a sweep: once its boundary variables (those in cut factors) are
  // updated, start_messages sends their messages and posts the receives; the class's interior
  // variables, which read and write no halo slot, are updated meanwhile; finish_messages waits
  // and lands the neighbours' messages in the halo slots.
  void start_messages(int64_t colour, const MessageState& lambda);
  void finish_messages(int64_t colour, MessageState& lambda);
  // After the variable beliefs: the halo variables' beliefs (layout [states | table entries]).
  void beliefs(double* belief);

  // The caller starts a sweep (what sweeps() counts; the re-solves of c_v = 0 variables, which
  // exchange as a sweep does, are not one).
  void count_sweep() { ++sweeps_; }
  // Totals since construction: values sent (8 bytes each), seconds spent in exchanges, sweeps.
  int64_t values_sent() const { return values_sent_; }
  double seconds() const { return seconds_; }
  int64_t sweeps() const { return sweeps_; }

 private:
  // Posts the filled send_ and recv_ buffers of the neighbours in active_, and waits for them.
  void post();
  void wait();

  const Dataset& data_;
  const FactorGraph& graph_;
  const ExampleShard& shard_;
  const Kernels& kernels_;
  Communicator& comm_;
  std::vector<std::vector<double>> send_, recv_;  // per neighbour
  std::vector<size_t> active_;                    // neighbours in this exchange
  std::vector<int> peers_;
  std::vector<std::span<const double>> send_spans_;
  std::vector<std::span<double>> recv_spans_;
  int64_t values_sent_ = 0;
  double seconds_ = 0.0;
  int64_t sweeps_ = 0;
};

}  // namespace pdsp
