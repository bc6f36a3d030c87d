#include "pdsp/learning/example_loopy_bp.hpp"

#include <algorithm>

namespace pdsp {

ExampleLoopyBp::ExampleLoopyBp(const InferenceEngine& engine, const ExampleChunks& chunks)
    : data_(engine.data()), graph_(engine.graph()), general_(engine.general()), chunks_(chunks) {
  if (binary_pairwise_kernels_apply(data_, engine.counting(), 1.0))
    // Own tables: the baselines set one example's potentials at a time (SGD, the annealed start),
    // while a shared table's representative may lie in another example.
    binary_ = std::make_unique<BinaryPairwiseKernels<double>>(data_, graph_, engine.counting(), 1.0,
                                                              SharedTableReads::Own);
  if (!binary_) {
    state_ = general_.make_message_state();
    return;
  }
  state_ = binary_->make_message_state();
}

std::pair<int64_t, int64_t> ExampleLoopyBp::range(int64_t n) const {
  const auto& ptr = data_.factor_var_ptr;
  const int64_t first = ptr[data_.factor_offset[n]], last = ptr[data_.factor_offset[n + 1]];
  // The binary kernels keep one number per slot, the general ones the arena.
  if (binary_) return {first, last};
  return {graph_.message_offset(first), graph_.message_offset(last)};
}

double ExampleLoopyBp::sweep(int64_t n, const double* potential, Workspace& w) {
  if (!binary_) return general_.sweep_example(n, potential, messages().data(), w);
  double change = 0.0;
  for (int64_t k = chunks_.example_ptr[n]; k < chunks_.example_ptr[n + 1]; ++k)
    change = std::max(change, binary_->update_variables(chunks_.chunk(k), potential, state_, w));
  return change;
}

double ExampleLoopyBp::beliefs(int64_t n, const double* potential, double* belief,
                               Workspace& w) const {
  if (!binary_)
    return general_.example_beliefs(n, potential, messages().data(), nullptr, belief, w).objective;
  // Variables first: the factor pass reads their beliefs for the violation it reports.
  double objective = 0.0;
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; v += kChunkRegions) {
    const int64_t last = std::min(v + kChunkRegions, data_.var_offset[n + 1]);
    objective +=
        binary_->variable_beliefs(v, last, potential, state_, nullptr, belief, w).objective;
  }
  for (int64_t a = data_.factor_offset[n]; a < data_.factor_offset[n + 1]; a += kChunkRegions) {
    const int64_t last = std::min(a + kChunkRegions, data_.factor_offset[n + 1]);
    objective += binary_->factor_beliefs(a, last, potential, state_, belief, w).objective;
  }
  return objective;
}

std::vector<double> ExampleLoopyBp::arena() const {
  if (!binary_) return messages();
  std::vector<double> arena(static_cast<size_t>(graph_.num_message_entries()));
  binary_->export_messages(state_, arena.data());
  return arena;
}

}  // namespace pdsp
