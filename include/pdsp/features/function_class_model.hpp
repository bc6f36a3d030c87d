#pragma once
// The potentials of the function classes (Domke, NIPS 2013, section 8), one class per region
// kind, over the observation rows x of the kind's typed regions (format 2):
//   zero      f = 0: the kind adds nothing;
//   constant  f = c, one value per state and type, whatever x is;
//   linear    the data's typed blocks (FeatureIndex);
//   mlp       f(x) = W s(U x + b) + c, s the logistic sigmoid, one output per state;
//   trees     boosted regression trees (tree_functions.hpp), grown by a learner, not by theta.
// The format-1 rows and the kinds left linear keep their linear terms (a FeatureIndex without
// the others). theta is the data's parameters (the replaced blocks among them unused) followed
// by each network's U [hidden x dim], b [hidden], W [states x hidden] and c [states]; a constant
// is a network of no hidden unit (c alone). A type of dim 0 (no observation) reads an empty x.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/data/stored_trees.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/features/tree_functions.hpp"

namespace pdsp {

enum class FunctionClass { Zero, Constant, Linear, Trees, Mlp };

struct FunctionClasses {
  FunctionClass unary = FunctionClass::Linear;     // the variables' typed regions
  FunctionClass pairwise = FunctionClass::Linear;  // the factors' typed regions
  int hidden = 16;                                 // units of an mlp's hidden layer
  uint64_t seed = 1;                               // of initial_theta
  // Networks read their inputs standardized by the type's rows in `data` (every rank's: a
  // collective), so that theta's U and b, their L2 term and the steps are on one scale whatever
  // the columns' units; model_file_theta folds the scaling back into U and b. Off: theta holds
  // the weights on the raw rows (a model file's, which predict evaluates).
  bool standardize_inputs = false;
  TreeSettings trees;
  std::vector<StoredEnsemble> stored_trees;  // grown before (a model file, a checkpoint)
  bool trees_from_file = false;              // then every ensemble the data needs is there
  std::string source;                        // the file they came from, for errors
};

class FunctionClassModel final : public PotentialModel {
 public:
  // Collective over data.communicator() when a kind is trees (their outputs are agreed).
  FunctionClassModel(const Dataset& data, const FunctionClasses& classes);

  std::string name() const override;
  bool is_linear() const override { return false; }
  int64_t num_params() const override { return data_.num_params + network_params_; }
  void forward(std::span<const double> theta, std::span<const double> base,
               std::span<double> potential,
               std::span<const uint8_t> skip_factor = {}) const override;
  void backward(std::span<const double> theta, std::span<const double> weight, std::span<double> z,
                std::span<const uint8_t> skip_factor = {}) const override;
  void forward_example(int64_t n, std::span<const double> theta, std::span<const double> base,
                       std::span<double> potential) const override;
  void add_backward_example(int64_t n, std::span<const double> theta,
                            std::span<const double> weight, std::span<double> z) const override;
  // The linear part's bound, plus per network the largest |c_t| + sum_i |W_ti| (s lies in
  // (0, 1)), plus the trees' bound.
  double largest_term(std::span<const double> theta) const override;

  // The linear part's kinds, then each network's parameters by its kind.
  std::vector<uint8_t> parameter_kinds() const override;
  // A seeded start away from zero, where every hidden unit would get the same gradient: U and W
  // drawn from N(0, 1 / fan-in), b and c and the data's parameters 0.
  std::vector<double> initial_theta() const override;
  // With standardized inputs, each network's U_ij / s_j and b_i - sum_j U_ij m_j / s_j (m_j and
  // s_j its column j's mean and standard deviation over the training rows): the same function
  // of the raw rows.
  std::vector<double> model_file_theta(std::span<const double> theta) const override;
  TreeFunctions* tree_functions() const override { return trees_.get(); }

 private:
  // One network: the type it replaces, where its parameters start in theta, its sizes.
  struct Network {
    uint8_t kind = 0;  // PotentialModel::kVariableParameter or kFactorParameter
    int64_t offset = 0;
    int dim = 0;
    int states = 0;  // the most states of a region of the type
    int hidden = 0;  // 0: a constant
    // x_j is read as (x_j - input_mean[j]) / input_scale[j]; empty: as it is. A column constant
    // over the rows keeps mean 0 and scale 1 (it is then one more bias).
    std::vector<double> input_mean, input_scale;
  };
  // A region a network reads: its kind's network, its potentials, its observation row.
  struct Region {
    int32_t network;
    int64_t position;    // of its first state in the potential layout
    int32_t size;        // states
    LocalIndex obs_row;  // -1: none
    int64_t factor;      // the factor's index, -1 for a variable (skip masks name factors)
    int64_t hidden_at;   // of its hidden units in KeptHiddenLayers::hidden
  };
  // The networks' parameters (from theta's first network on) with each U stored input by input
  // (dim x hidden): a region's sparse inputs then read and write contiguous runs of hidden
  // units, which vectorise. Gradients are summed in this layout too; add_in_file_order adds one
  // to `out` (theta's layout, from the first network on). The weights are those applied to the
  // raw rows: input_major folds the standardization in, add_in_file_order takes the gradient
  // back through it.
  std::vector<double> input_major(std::span<const double> theta) const;
  void add_in_file_order(const double* gradient, double* out) const;
  // Each network's column means and standard deviations over this rank's regions (copies of
  // cut factors left out) summed over the ranks.
  void standardize_inputs();
  // A thread's scratch: the hidden layer (padded to whole vectors) and its back-propagated
  // weights.
  struct Scratch {
    std::vector<double> hidden, pre;
  };
  Scratch scratch() const;
  // s(U x + b) of one region, in scratch.hidden; weights is input_major's layout.
  const double* hidden_layer(const Region& r, const double* weights, Scratch& scratch) const;
  // f of one region (h: its hidden layer) added to its potentials.
  void region_forward(const Region& r, const double* weights, const double* h,
                      double* potential) const;
  // The region's gradient (weights at its potentials; h: its hidden layer) added to grad, laid
  // out as weights.
  void region_backward(const Region& r, const double* weights, const double* h,
                       const double* weight, double* grad, Scratch& scratch) const;
  // The regions of example n.
  std::span<const Region> example_regions(int64_t n) const;
  static bool skipped(const Region& r, std::span<const uint8_t> skip_factor) {
    return r.factor >= 0 && !skip_factor.empty() && skip_factor[r.factor] != 0;
  }

  const Dataset& data_;
  FunctionClass unary_, pairwise_;  // for name()
  uint64_t seed_;                   // of initial_theta
  FeatureIndex linear_;
  std::vector<Network> networks_;
  int64_t network_params_ = 0;
  std::vector<Region> regions_;  // example by example (variables, factors), then copied factors
  std::vector<int64_t> example_regions_;  // [examples + 1] into regions_
  int64_t hidden_units_ = 0;              // over all regions
  // The hidden layers of the last forward pass over all regions, with the networks and skipped
  // factors they were computed at: the backward pass at the same point reads them instead of
  // computing them again (a sixth of a network's training time on horses, for 8 bytes per
  // hidden unit and region).
  struct KeptHiddenLayers {
    std::vector<double> weights;  // input_major's layout
    std::vector<uint8_t> skip_factor;
    std::vector<double> hidden;  // Region::hidden_at
  };
  mutable KeptHiddenLayers kept_;
  // The backward pass sums fixed blocks of regions into their own gradients, then the blocks
  // in order: the same sums for any thread count.
  int64_t block_regions_ = 1;
  mutable std::vector<double> block_grad_;
  // The boosted kinds' trees; null when no kind is boosted. Mutable through the const model by
  // design: they grow by boosting rounds (a learner's), not through theta.
  std::unique_ptr<TreeFunctions> trees_;
};

// The name --unary-model and --pairwise-model take for the class.
std::string function_class_name(FunctionClass c);

}  // namespace pdsp
