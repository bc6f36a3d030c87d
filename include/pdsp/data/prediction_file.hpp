#pragma once
// The prediction file: /prediction/label int32 [V] and /prediction/marginal float64 [states],
// in global variable order. Every rank writes its own slice in turn (no rank holds the whole).
#include <cstdint>
#include <string>
#include <vector>

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

// Collective. `total_vars` and `total_states` size the datasets of the whole file;
// `model_provenance` is the provenance of the model that predicted (its training data, its run).
void write_predictions(const std::string& path, const PredictionSlice& slice, int64_t total_vars,
                       int64_t total_states, const Provenance& provenance,
                       const Provenance& model_provenance, Communicator& comm);

}  // namespace pdsp
