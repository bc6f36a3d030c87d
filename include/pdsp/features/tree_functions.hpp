#pragma once
// The boosted function class of a model (Domke, NIPS 2013): one TreeEnsemble per region type
// of a boosted kind, reading the type's observation rows (format 2) as dense rows, with the
// sum of its trees kept per region of this slice (the margins) and added to the potentials.
// The trees take no part in theta: a learner that boosts them (learning/tree_fits.hpp) adds
// rounds and their values to the margins through ensembles(), then sets theta again so the
// potentials follow.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/features/tree_ensemble.hpp"

namespace pdsp {

class TreeFunctions {
 public:
  // A region that an ensemble writes: its row among the ensemble's rows of this slice, its
  // potentials, and where it is in the file.
  struct Region {
    int32_t ensemble;
    int64_t row;
    int64_t position;  // of its first state in the potential layout
    int32_t size;      // states or table entries
    int64_t factor;    // the factor's index, -1 for a variable (skip masks name factors)
    int64_t local;     // the variable's or factor's index in the slice
  };
  struct Ensemble {
    uint8_t kind;  // PotentialModel::kVariableParameter or kFactorParameter
    int32_t type;
    int dim;
    std::vector<float> features;   // [rows x dim] this slice's rows, the observation rows dense
    std::vector<int64_t> regions;  // [rows] into regions()
    std::unique_ptr<TreeRows> rows;
    std::unique_ptr<TreeEnsemble> trees;
    std::vector<double> margin;  // [rows x outputs] the sum of the trees at each row
  };

  // `boosted` names the kinds whose typed regions the trees write; `stored` the trees grown
  // before (none yet: empty), `from_file` whether they are a model file's or checkpoint's, which
  // holds every ensemble the data needs; `source` the file, for errors.
  TreeFunctions(const Dataset& data, TypedKinds boosted, const TreeSettings& settings,
                const std::vector<StoredEnsemble>& stored, bool from_file,
                const std::string& source);

  // potential += the margins of every region (the skipped factors' tables left as they are).
  void add_to(std::span<double> potential, std::span<const uint8_t> skip_factor) const;
  void add_example_to(int64_t n, std::span<double> potential) const;
  double largest_term() const;

  std::vector<Ensemble>& ensembles() { return ensembles_; }
  std::span<const Region> regions() const { return regions_; }
  std::vector<StoredEnsemble> stored() const;
  // Replaces the trees by `stored` (a checkpoint's, from `source`) and recomputes the margins.
  void load(const std::vector<StoredEnsemble>& stored, const std::string& source);

 private:
  // Sets ensemble e's trees: `stored`'s entry of its kind and type, or (unless `from_file`)
  // none grown.
  void set_trees(Ensemble& ens, int outputs, const std::vector<StoredEnsemble>& stored,
                 bool from_file, const std::string& source);

  TreeSettings settings_;
  std::vector<Ensemble> ensembles_;
  std::vector<Region> regions_;           // example by example, then a shard's copied factors
  std::vector<int64_t> example_regions_;  // [examples + 1] into regions_
};

}  // namespace pdsp
