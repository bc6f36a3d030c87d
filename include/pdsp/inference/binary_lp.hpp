#pragma once
// The exact maximum of a linear function over the local polytope of one binary pairwise example
// (every variable two states, every factor two variables): the structured SVM's loss-augmented
// inference at eps = 0, which message passing only approaches as its temperature goes to 0.
// For binary pairwise graphs the local polytope's linear programme equals the roof dual, which
// one minimum cut of the doubled graph (a node for x_v and one for 1 - x_v) solves; its optimum
// is a half-integral vertex. The structured SVM learner (ssvm_frank_wolfe.hpp) calls it once per
// example and step.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/min_cut.hpp"
#include "pdsp/inference/small_min_cut.hpp"

namespace pdsp {

// A vertex of a binary pairwise example's local polytope: x_v = mu_v(1) = level[v] / 2 for the
// example's variables in order, and for its factors (i, j) in order whether mu(1, 1) lies at the
// top of its range, min(x_i, x_j), or at the bottom, max(0, x_i + x_j - 1). The range is one
// point unless x_i = x_j = 1/2; `top` is 0 there, so equal vertices compare equal.
struct HalfIntegralVertex {
  std::vector<uint8_t> level;
  std::vector<uint8_t> top;
  bool operator==(const HalfIntegralVertex&) const = default;
};

// Every variable two states and every factor two variables.
bool is_binary_pairwise(const Dataset& data);

// An InputError naming `data`'s file and the first variable with other than two states or
// factor with other than two variables, if any.
void require_binary_pairwise(const Dataset& data, const std::string& why);

// The vertex at the ground-truth labelling of example n.
HalfIntegralVertex labelled_vertex(const Dataset& data, int64_t n);

// sum over example n's positions of potential * mu, with mu the vertex's beliefs; `potential` is
// in the layout [states | table entries] of the whole slice.
double vertex_score(const Dataset& data, int64_t n, const HalfIntegralVertex& vertex,
                    std::span<const double> potential);

// weight += scale * mu at example n's positions (the same layout), for FeatureIndex's moments.
void add_vertex_beliefs(const Dataset& data, int64_t n, const HalfIntegralVertex& vertex,
                        double scale, std::span<double> weight);

class BinaryLpOracle {
 public:
  // A vertex of example n's local polytope where potential . mu is largest.
  HalfIntegralVertex maximise(const Dataset& data, int64_t n, std::span<const double> potential);

 private:
  // The roof dual of example n on either cut (the small one where the doubled graph fits).
  template <class Cut>
  HalfIntegralVertex roof_dual(const Dataset& data, int64_t n, std::span<const double> potential,
                               Cut& cut);

  MinCut cut_;
  SmallMinCut small_cut_;
  std::vector<double> linear_;  // the energy's coefficient of x_v, per variable of the example
};

}  // namespace pdsp
