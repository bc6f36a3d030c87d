#pragma once
// The boosted trees of a model (features/tree_ensemble.hpp) as model files and checkpoints hold
// them: one group per region type whose function class is "trees", /trees/<kind>_<type>, with
//   booster     uint8 [bytes]  XGBoost's own JSON model of the trees (their splits),
//   tree_offset int64 [trees + 1]  where each tree's leaf values start in leaf_value,
//   leaf_value  float64        per tree, the value of each XGBoost node id (0 where the node
//                              is not a leaf): the values pdsp fitted, not XGBoost's,
// and the attributes kind ("variables" or "factors"), type and outputs (the potentials each
// tree set writes: a region's states or table entries, the type's largest). Tree t writes
// output t % outputs.
#include <cstdint>
#include <string>
#include <vector>

#include "pdsp/data/hdf5_file.hpp"

namespace pdsp {

struct StoredEnsemble {
  std::string kind;  // "variables" or "factors"
  int32_t type = 0;
  int32_t outputs = 0;
  std::string booster;  // XGBoost's JSON model
  std::vector<int64_t> tree_offset{0};
  std::vector<double> leaf_value;
  int64_t trees() const { return static_cast<int64_t>(tree_offset.size()) - 1; }
};

void write_ensembles(h5::File& file, const std::vector<StoredEnsemble>& ensembles);
// The ensembles under /trees (none when the group is absent), checked: a malformed one is an
// InputError naming the file and the dataset.
std::vector<StoredEnsemble> read_ensembles(const h5::File& file);

}  // namespace pdsp
