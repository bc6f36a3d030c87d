#pragma once
// The ground-truth labelling as positions in the potential layout [states | table entries]: each
// variable's labelled state and each factor's labelled joint state, for the regions this rank
// owns (a shard's halo and copies are counted by their owners). d of design.md §2 is the
// model's backward pass on the indicator of these positions (InferenceEngine::
// ground_truth_moments). The indicator itself is as large as the potentials (800 MB on a
// 5-million-parameter chain of 22 labels, a page per factor table touched), so the linear
// encodings sum d from the positions; the dense form is built only for the passes that need it.
#include <cstdint>
#include <vector>

#include "pdsp/data/allocation.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/factor_graph.hpp"

namespace pdsp {

struct GroundTruth {
  static constexpr int64_t kNone = -1;
  int64_t num_positions = 0;   // states + table entries
  std::vector<int64_t> state;  // [owned variables] position of the label; kNone if unobserved
  std::vector<int64_t> entry;  // [owned factors] position of the labelled joint state; kNone if a
                               // variable of the factor is unobserved
  // 1 at every position above, 0 elsewhere.
  ZeroedArray<double> indicator() const;
  // The labelled position of variable v (factor a); kNone for a region this rank does not own.
  int64_t state_of(int64_t v) const {
    return v < static_cast<int64_t>(state.size()) ? state[v] : kNone;
  }
  int64_t entry_of(int64_t a) const {
    return a < static_cast<int64_t>(entry.size()) ? entry[a] : kNone;
  }
};

GroundTruth ground_truth(const Dataset& data, const FactorGraph& graph);

}  // namespace pdsp
