#pragma once
// The model file: /theta float64 [d], one root attribute per hyper-parameter and the run's
// provenance, the boosted trees of a trees class (/trees, stored_trees.hpp) and the weights of
// non-local terms (/nonlocal/psi).
#include <string>
#include <vector>

#include "pdsp/data/provenance.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {

inline constexpr const char* kModelFormat = "pdsp-model";
inline constexpr int64_t kModelFormatVersion = 1;

struct ModelFile {
  std::vector<double> theta;
  double epsilon = 1.0;
  std::string counting = "uniform";
  std::string inference;  // "lbp" / "mean-field" for the likelihood baselines, else empty
  // The function classes of the potentials and the networks' hidden units: theta holds the
  // data's parameters, then the networks' (features/function_class_model.hpp). "linear" in
  // files written before the classes were recorded.
  std::string unary_model = "linear";
  std::string pairwise_model = "linear";
  int64_t hidden = 16;
  bool linear_classes() const { return unary_model == "linear" && pairwise_model == "linear"; }
  std::vector<StoredEnsemble> trees;  // one per boosted region type
  // The weights of the data's non-local terms (nonlocal_terms.hpp: templates, psi_u, psi_w), each
  // finite and >= 0; empty: the model has none.
  std::vector<double> psi;
  Provenance provenance;
};

// Each attribute keeps its type (string, float64 or int64); a non-empty psi goes to
// /nonlocal/psi. Atomic, with a rescue copy when the file cannot be written where asked (see
// write_output).
void write_model(const std::string& path, const std::vector<double>& theta,
                 const Fields& attributes, const Provenance& provenance,
                 const std::vector<StoredEnsemble>& trees = {},
                 const std::vector<double>& psi = {});
ModelFile read_model(const std::string& path);

}  // namespace pdsp
