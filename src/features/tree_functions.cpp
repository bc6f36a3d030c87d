#include "pdsp/features/tree_functions.hpp"

#include <algorithm>

#include "pdsp/features/potential_model.hpp"
#include "pdsp/features/typed_regions.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

const char* kind_name(uint8_t kind) {
  return kind == PotentialModel::kVariableParameter ? "variables" : "factors";
}

}  // namespace

TreeFunctions::TreeFunctions(const Dataset& data, TypedKinds boosted, const TreeSettings& settings,
                             const std::vector<StoredEnsemble>& stored, bool from_file,
                             const std::string& source)
    : settings_(settings) {
  std::vector<int32_t> var_ensemble, factor_ensemble;
  std::vector<double> outputs;  // per ensemble, agreed over the ranks below
  const auto add_kind = [&](const RegionTypes& types, bool on,
                            const std::vector<LocalIndex>& region_offset, uint8_t kind) {
    std::vector<int32_t> ensemble_of(static_cast<size_t>(types.num_types()), -1);
    if (!on || !types.present) return ensemble_of;
    for (int32_t k = 0; k < types.num_types(); ++k) {
      // Every rank sees the same types, so every rank throws here or none does.
      if (types.dim[k] == 0)
        throw InputError(std::string(kind == PotentialModel::kVariableParameter
                                         ? "--unary-model"
                                         : "--pairwise-model") +
                         " trees: " + data.source() + "'s " + kind_name(kind) + " type " +
                         std::to_string(k) + " has no observation (dim 0) for trees to split");
      ensemble_of[k] = static_cast<int32_t>(ensembles_.size());
      ensembles_.push_back({kind, k, types.dim[k], {}, {}, {}, {}, {}});
      outputs.push_back(0.0);
    }
    for (size_t r = 0; r < types.type.size(); ++r)
      if (types.type[r] >= 0) {
        double& most = outputs[static_cast<size_t>(ensemble_of[types.type[r]])];
        most = std::max(most, static_cast<double>(region_offset[r + 1] - region_offset[r]));
      }
    return ensemble_of;
  };
  var_ensemble = add_kind(data.var_types, boosted.variables, data.state_offset,
                          PotentialModel::kVariableParameter);
  factor_ensemble = add_kind(data.factor_types, boosted.factors, data.table_offset,
                             PotentialModel::kFactorParameter);
  // Every rank's ensembles have the outputs of the type's largest region anywhere in the file.
  data.communicator().allreduce({}, outputs);

  const auto add_region = [&](const TypedRegion& r) {
    const int32_t e = (r.factor ? factor_ensemble : var_ensemble)[r.type];
    if (e < 0) return;
    Ensemble& ens = ensembles_[static_cast<size_t>(e)];
    const auto row = static_cast<int64_t>(ens.regions.size());
    ens.regions.push_back(static_cast<int64_t>(regions_.size()));
    ens.features.resize(ens.features.size() + static_cast<size_t>(ens.dim), 0.0f);
    if (r.obs_row >= 0) {
      const ObservationRows& obs = data.observations;
      for (int64_t k = obs.ptr[r.obs_row]; k < obs.ptr[r.obs_row + 1]; ++k)
        ens.features[row * ens.dim + obs.index[k]] = static_cast<float>(obs.value_at(k));
    }
    regions_.push_back({e, row, r.position, r.size, r.factor ? r.local : -1, r.local});
  };
  example_regions_.push_back(0);
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    for_each_typed_region(data, n, add_region);
    example_regions_.push_back(static_cast<int64_t>(regions_.size()));
  }
  for_each_copied_typed_factor(data, add_region);

  for (size_t e = 0; e < ensembles_.size(); ++e) {
    Ensemble& ens = ensembles_[e];
    ens.rows =
        std::make_unique<TreeRows>(ens.features, static_cast<int64_t>(ens.regions.size()), ens.dim);
    set_trees(ens, std::max(1, static_cast<int>(outputs[e])), stored, from_file, source);
  }
}

void TreeFunctions::set_trees(Ensemble& ens, int outputs, const std::vector<StoredEnsemble>& stored,
                              bool from_file, const std::string& source) {
  const std::string kind = kind_name(ens.kind);
  const auto found = std::find_if(stored.begin(), stored.end(), [&](const StoredEnsemble& s) {
    return s.kind == kind && s.type == ens.type;
  });
  if (found == stored.end()) {
    // A file holds every ensemble a run grows, so one without this type's is damaged.
    if (from_file)
      throw InputError(source + ": /trees/" + kind + "_" + std::to_string(ens.type) +
                       " is missing: the data's " + kind + " of type " + std::to_string(ens.type) +
                       " need its trees");
    ens.trees = std::make_unique<TreeEnsemble>(outputs, ens.dim, settings_);
  } else {
    if (found->outputs != outputs)
      throw InputError(source + ": /trees/" + kind + "_" + std::to_string(ens.type) + " writes " +
                       std::to_string(found->outputs) +
                       " potentials per region, but the data's regions of the type have " +
                       std::to_string(outputs));
    ens.trees = std::make_unique<TreeEnsemble>(*found, ens.dim, settings_, source);
  }
  ens.margin.assign(ens.regions.size() * static_cast<size_t>(outputs), 0.0);
  ens.trees->add_margins(*ens.rows, 0, ens.margin);
}

void TreeFunctions::load(const std::vector<StoredEnsemble>& stored, const std::string& source) {
  for (Ensemble& ens : ensembles_) set_trees(ens, ens.trees->outputs(), stored, true, source);
}

void TreeFunctions::add_to(std::span<double> potential,
                           std::span<const uint8_t> skip_factor) const {
  const auto regions = static_cast<int64_t>(regions_.size());
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < regions; ++i) {
    const Region& r = regions_[i];
    if (r.factor >= 0 && !skip_factor.empty() && skip_factor[r.factor] != 0) continue;
    const Ensemble& ens = ensembles_[static_cast<size_t>(r.ensemble)];
    const double* margin = ens.margin.data() + r.row * ens.trees->outputs();
    for (int32_t t = 0; t < r.size; ++t) potential[r.position + t] += margin[t];
  }
}

void TreeFunctions::add_example_to(int64_t n, std::span<double> potential) const {
  for (int64_t i = example_regions_[n]; i < example_regions_[n + 1]; ++i) {
    const Region& r = regions_[i];
    const Ensemble& ens = ensembles_[static_cast<size_t>(r.ensemble)];
    const double* margin = ens.margin.data() + r.row * ens.trees->outputs();
    for (int32_t t = 0; t < r.size; ++t) potential[r.position + t] += margin[t];
  }
}

double TreeFunctions::largest_term() const {
  double largest = 0.0;
  for (const Ensemble& ens : ensembles_) largest = std::max(largest, ens.trees->largest_term());
  return largest;
}

std::vector<StoredEnsemble> TreeFunctions::stored() const {
  std::vector<StoredEnsemble> out;
  for (const Ensemble& ens : ensembles_)
    out.push_back(ens.trees->stored(kind_name(ens.kind), ens.type));
  return out;
}

}  // namespace pdsp
