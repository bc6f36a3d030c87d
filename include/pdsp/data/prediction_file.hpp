#pragma once
// The prediction file: /prediction/label int32 [V] and /prediction/marginal float64 [states],
// in global variable order. Every rank writes its own slice in turn (no rank holds the whole).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/example_shard.hpp"
#include "pdsp/data/provenance.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

struct PredictionSlice {
  // Where label and marginal go in the file: one run each for a slice of whole examples, the own
  // variables' runs for a shard of a split example.
  std::vector<ArrayRun> var_runs, state_runs;
  std::vector<int32_t> label;
  std::vector<double> marginal;
};

// The label predicted for variable v: the arg-max of its beliefs (one per state, in the
// slice's state layout), the lowest state among ties.
inline int32_t predicted_label(const Dataset& data, std::span<const double> beliefs, int64_t v) {
  int32_t best = 0;
  for (int32_t s = 1; s < data.card[v]; ++s)
    if (beliefs[data.state_offset[v] + s] > beliefs[data.state_offset[v] + best]) best = s;
  return best;
}

// Collective. `total_vars` and `total_states` size the datasets of the whole file;
// `model_provenance` is the provenance of the model that predicted (its training data, its run).
void write_predictions(const std::string& path, const PredictionSlice& slice, int64_t total_vars,
                       int64_t total_states, const Provenance& provenance,
                       const Provenance& model_provenance, Communicator& comm);

}  // namespace pdsp
