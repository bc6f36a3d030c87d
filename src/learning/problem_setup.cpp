#include "pdsp/learning/problem_setup.hpp"

#include <omp.h>

#include <algorithm>

#include "pdsp/inference/colouring.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

std::vector<double> training_loss(const Dataset& data, const ProblemSettings& settings) {
  if (settings.loss_augmented && !data.has_labels())
    throw InputError(settings.source + ": /vars/label: training needs ground-truth labels");
  if (!settings.loss_augmented || settings.loss_weight == 0.0) return {};
  return loss_augmentation(data, settings.loss_weight);
}

void require_max_product_counting(const Dataset& data, const CountingNumbers& c,
                                  const std::string& source) {
  for (int64_t a = 0; a < c.factor.size(); ++a)
    if (!(c.factor[a] > 0))
      throw InputError(source + ": /factors/counting[" + std::to_string(data.file_factor(a)) +
                       "]: --epsilon 0 needs every c_a > 0 (use --counting uniform)");
  for (int64_t v = 0; v < c.var.size(); ++v)
    if (c.var[v] < 0)
      throw InputError(source + ": /vars/counting[" + std::to_string(data.file_var(v)) +
                       "]: --epsilon 0 needs every c_v >= 0 (" + counting_mode_name(c.mode) +
                       " gives " + std::to_string(c.var[v]) + "; use --counting uniform)");
}

std::unique_ptr<Kernels> make_binary_pairwise_kernels(const Dataset& data, const FactorGraph& graph,
                                                      const CountingNumbers& counting,
                                                      const ProblemSettings& settings,
                                                      double temperature) {
  const bool single = settings.message_precision == MessagePrecision::Single;
  if (!settings.specialised_kernels ||
      !binary_pairwise_kernels_apply(data, counting, temperature)) {
    if (single)
      throw InputError(settings.source +
                       ": --message-precision single needs the binary pairwise kernels (binary "
                       "variables, pairwise factors, eps > 0, every c_a > 0 and c_v != 0); this "
                       "problem runs the general kernels, which keep double messages");
    return nullptr;
  }
  if (single)
    return std::make_unique<BinaryPairwiseKernels<float>>(data, graph, counting, temperature);
  return std::make_unique<BinaryPairwiseKernels<double>>(data, graph, counting, temperature);
}

bool share_examples_between_threads(const Dataset& data, const FactorGraph& graph) {
  const int threads = omp_get_max_threads();
  if (threads < 2) return false;
  int64_t largest = 0;
  int64_t total = 0;
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    const int64_t first = data.var_offset[n];
    const int64_t last = data.var_offset[n + 1];
    const int64_t work = last - first + graph.var_slot_ptr[last] - graph.var_slot_ptr[first];
    largest = std::max(largest, work);
    total += work;
  }
  return largest * 2 * threads > total;
}

// In training, trees at least this deep are swept along their trees. A sweep along a tree
// updates every variable twice; colour classes carry a message one level per sweep, which with
// the messages warm-started from one step to the next is enough on short chains: on OCR (words
// of at most 14 letters) tree sweeps took the one-core time to CRFsuite's optimum from
// 0.76-0.81x of CRFsuite's to 0.94-1.53x for the same iterations, while on the UMass citations
// (median 24 tokens, up to 184) colour classes stopped L-BFGS far from the optimum. Inference
// at a fixed theta sweeps until nothing moves, which colour classes take about half the longest
// path to reach (8 sweeps on the citations' short chains) and tree sweeps one, and a second to
// see it.
constexpr int64_t kTreeSweepDepth = 16;

std::vector<uint8_t> sweep_along_trees(const Dataset& data, const FactorGraph& graph,
                                       const CountingNumbers& counting, bool general_kernels,
                                       bool shallow_too) {
  if (!general_kernels || data.shard) return {};
  std::vector<uint8_t> along(counting.exact);
  if (shallow_too) return along;
  for (int64_t n = 0; n < data.num_examples(); ++n)
    if (along[n] && tree_depth(data, graph, n) < kTreeSweepDepth) along[n] = 0;
  return along;
}

std::vector<double> loss_augmentation(const Dataset& data, double loss_weight) {
  std::vector<double> loss(static_cast<size_t>(data.num_states()));
  for (int64_t v = 0; v < data.num_vars(); ++v)
    for (int64_t s = 0; s < data.card[v]; ++s) {
      const int64_t i = data.state_offset[v] + s;
      if (data.label[v] < 0) continue;  // unobserved: no loss to augment with
      const double base =
          data.var_loss.empty() ? (s != data.label[v] ? 1.0 : 0.0) : data.var_loss[i];
      loss[i] = loss_weight * base;
    }
  return loss;
}

}  // namespace pdsp
