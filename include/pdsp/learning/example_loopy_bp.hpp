#pragma once
// Loopy belief propagation one example at a time, for ApproximateCrf: the messages of a rank's
// examples, and the sweeps, beliefs and Bethe objective of one example. The update is the block
// update of the primal-dual kernels with Bethe counting numbers at eps = 1, which is
// sum-product. Where every variable is binary and every factor pairwise (image grids) it runs
// the binary pairwise kernels: one number per message block, each of the example's colour
// classes in chunks of vectorised updates (a sweep about 9x, the beliefs about 16x faster than
// the general kernels': docs/benchmarks.md). Elsewhere the general kernels sweep the example's
// variables in file order, which carries a message along a chain from end to end in one sweep.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "pdsp/inference/binary_pairwise.hpp"
#include "pdsp/inference/colouring.hpp"
#include "pdsp/learning/inference_engine.hpp"

namespace pdsp {

class ExampleLoopyBp {
 public:
  // `engine` holds Bethe counting numbers at eps = 1; its general kernels run where the binary
  // ones do not apply. `chunks`: the engine's graph's colour classes (chunk_classes), which the
  // binary kernels sweep; kept by reference.
  ExampleLoopyBp(const InferenceEngine& engine, const ExampleChunks& chunks);

  bool binary() const { return binary_ != nullptr; }
  // Every example's messages in the kernels' form (all zero: where inference starts).
  std::vector<double>& messages() { return std::get<std::vector<double>>(state_); }
  const std::vector<double>& messages() const { return std::get<std::vector<double>>(state_); }
  // The range of messages() that holds example n's.
  std::pair<int64_t, int64_t> range(int64_t n) const;
  // One sweep over example n's variables; returns the largest change of a message entry.
  double sweep(int64_t n, const double* potential, Workspace& w);
  // Example n's beliefs, written into `belief` (the potential layout); returns its Bethe
  // objective, the approximate log Z at a fixed point.
  double beliefs(int64_t n, const double* potential, double* belief, Workspace& w) const;
  // All messages in FactorGraph's arena form (two entries per binary message block).
  std::vector<double> arena() const;

 private:
  const Dataset& data_;
  const FactorGraph& graph_;
  const MessagePassing& general_;
  std::unique_ptr<BinaryPairwiseKernels<double>> binary_;
  MessageState state_;
  const ExampleChunks& chunks_;  // the binary kernels' sweeps
};

}  // namespace pdsp
