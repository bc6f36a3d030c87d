#pragma once
// What turns parameters into potentials (design.md §2): u_i = base_i + f_i(theta) at every
// position i of the layout [states | table entries], where base is what the caller adds on the
// variables' states (the loss augmentation, a potential offset) and f is the model. The learners
// need two passes of it: forward (the potentials) and backward (the vector-Jacobian product
// J(theta)^T w, whose weights are beliefs or the ground-truth indicator). The data's features
// (FeatureIndex: f = Phi theta) are the linear implementation; a nonlinear one (a network or trees
// over the observation rows of each region type) is another file beside it.
//
// A model's f_i depends on theta and on the data of position i's region only, so that regions
// with equal feature rows get equal potentials: the general kernels read one table for all the
// factors that share one (shared_tables.hpp), and the skip masks below name the others.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pdsp/features/ground_truth.hpp"

namespace pdsp {

class TreeFunctions;

class PotentialModel {
 public:
  virtual ~PotentialModel() = default;
  // What the model is, for logs and tests.
  virtual std::string name() const = 0;
  // f = Phi theta with Phi fixed: then the ground-truth term is theta . d with d fixed, F is
  // convex in theta, and the dual, its certificates, the curvature models and ssvm-fw's closed
  // form apply. A nonlinear model gets none of them.
  virtual bool is_linear() const = 0;
  virtual int64_t num_params() const = 0;
  // For each parameter, which region kinds' potentials read it: kVariableParameter,
  // kFactorParameter, both or neither (0). Learners that fit one kind at a time use it.
  static constexpr uint8_t kVariableParameter = 1;
  static constexpr uint8_t kFactorParameter = 2;
  virtual std::vector<uint8_t> parameter_kinds() const = 0;
  // Where training starts when no checkpoint says otherwise: zero for a linear model; a
  // nonlinear one may need to start away from it (a network's hidden units would all get the
  // same gradient there).
  virtual std::vector<double> initial_theta() const {
    return std::vector<double>(static_cast<size_t>(num_params()), 0.0);
  }
  // theta as a model file holds it, which predict and outside readers evaluate as written
  // (design.md §2): theta itself unless the model trains in other coordinates (a network on
  // standardized inputs stores the weights it applies to the raw rows).
  virtual std::vector<double> model_file_theta(std::span<const double> theta) const {
    return {theta.begin(), theta.end()};
  }

  // potential = base + f(theta) over every position, base empty (0) or [states] (0 on the table
  // entries); the tables of the factors a with skip_factor[a] != 0 are left as they are.
  virtual void forward(std::span<const double> theta, std::span<const double> base,
                       std::span<double> potential,
                       std::span<const uint8_t> skip_factor = {}) const = 0;
  // z = J(theta)^T weight over every position (z has num_params() entries), the tables of the
  // skipped factors not read. Summed in an order fixed by the data, so that the result does not
  // depend on the thread count (design.md §6).
  virtual void backward(std::span<const double> theta, std::span<const double> weight,
                        std::span<double> z, std::span<const uint8_t> skip_factor = {}) const = 0;
  // backward() on the ground truth's indicator (ground_truth.hpp), which a model may sum from the
  // labelled positions alone: backward() on the dense indicator unless overridden.
  virtual void backward_truth(std::span<const double> theta, const GroundTruth& truth,
                              std::span<double> z) const {
    backward(theta, truth.indicator(), z);
  }
  // The same two over the positions of example n only (stochastic and per-example learners):
  // its potentials are written (base as above), z is added to.
  virtual void forward_example(int64_t n, std::span<const double> theta,
                               std::span<const double> base, std::span<double> potential) const = 0;
  virtual void add_backward_example(int64_t n, std::span<const double> theta,
                                    std::span<const double> weight, std::span<double> z) const = 0;
  // An upper bound on |f_i(theta)| over every position (infinity when none is known): the
  // potentials need no scan for overflow while |base| plus it is far below the largest double.
  virtual double largest_term(std::span<const double> theta) const = 0;
  // The boosted trees among the model's functions (tree_functions.hpp), null when there are
  // none: a learner that can boost grows them, then sets theta again.
  virtual TreeFunctions* tree_functions() const { return nullptr; }
};

}  // namespace pdsp
