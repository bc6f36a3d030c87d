#include "pdsp/learning/example_loopy_bp.hpp"

#include <algorithm>

#include "pdsp/inference/colouring.hpp"

namespace pdsp {

ExampleLoopyBp::ExampleLoopyBp(const InferenceEngine& engine, KernelChoice choice)
    : data_(engine.data()), graph_(engine.graph()), general_(engine.general()) {
  if (choice == KernelChoice::Fastest &&
      binary_pairwise_kernels_apply(data_, engine.counting(), 1.0))
    // Own tables: the baselines set one example's potentials at a time (SGD, the annealed start),
    // while a shared table's representative may lie in another example.
    binary_ = std::make_unique<BinaryPairwiseKernels<double>>(data_, graph_, engine.counting(), 1.0,
                                                              SharedTableReads::Own);
  if (!binary_) {
    state_ = general_.make_message_state();
    return;
  }
  state_ = binary_->make_message_state();
  // The colour classes of each example, cut into chunks the kernels' lanes hold.
  const Colouring colouring = colour_variables(data_, graph_);
  order_ = colouring.order;
  for (int64_t n = 0; n < data_.num_examples(); ++n) {
    for (int64_t c = colouring.example_class_ptr[n]; c < colouring.example_class_ptr[n + 1]; ++c) {
      int64_t begin = colouring.class_ptr[c];
      int64_t slots = 0;
      for (int64_t i = begin; i < colouring.class_ptr[c + 1]; ++i) {
        const LocalIndex v = order_[i];
        const int64_t degree = graph_.var_slot_ptr[v + 1] - graph_.var_slot_ptr[v];
        if (i > begin && slots + degree > kChunkSlots) {
          chunks_.emplace_back(begin, i);
          begin = i;
          slots = 0;
        }
        slots += degree;
      }
      if (begin < colouring.class_ptr[c + 1]) chunks_.emplace_back(begin, colouring.class_ptr[c + 1]);
    }
    chunk_ptr_.push_back(static_cast<int64_t>(chunks_.size()));
  }
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
  const std::span<const LocalIndex> order(order_);
  for (int64_t k = chunk_ptr_[n]; k < chunk_ptr_[n + 1]; ++k) {
    const auto [begin, end] = chunks_[k];
    change = std::max(change, binary_->update_variables(order.subspan(begin, end - begin),
                                                        potential, state_, w));
  }
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
    objective += binary_->variable_beliefs(v, last, potential, state_, nullptr, belief, w).objective;
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
