#pragma once
// Everything one rank owns for its slice of examples: potentials, the message arena, beliefs
// and the OpenMP-parallel loops over examples. It knows nothing of MPI: the trainer combines the
// local quantities of all ranks. Every sum over examples is taken in example order, so results
// do not depend on the thread count.
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "pdsp/learning/feature_index.hpp"

namespace pdsp {

struct ProblemSettings {
  double epsilon = 1.0;
  CountingMode counting = CountingMode::Auto;
  double loss_weight = 1.0;
  bool loss_augmented = true;  // training adds e_v(s); prediction does not
  std::string source;          // data file, for error messages
};

struct LocalEvaluation {
  double objective = 0;  // sum of the smax terms of F over this rank's examples
  double dual = 0;       // sum of the entropy and loss terms of D
  double violation = 0;  // largest marginalisation violation
};

class LocalProblem {
 public:
  LocalProblem(const Dataset& data, const ProblemSettings& settings);

  const Dataset& data() const { return data_; }
  const FactorGraph& graph() const { return graph_; }
  const CountingNumbers& counting() const { return counting_; }
  int64_t num_params() const { return data_.num_params; }
  // eps > 0 with a negative counting number: F is not convex in the messages and the sweeps
  // converge to a saddle point (design.md §5, Claim 3).
  bool is_saddle_problem() const;

  void set_theta(std::span<const double> theta);
  // Runs `count` sweeps; returns the largest message change of the last one.
  double sweep(int count);
  void resolve_kinks();
  double objective();
  // Computes the beliefs and the quantities that depend on them.
  LocalEvaluation evaluate();
  void model_moments(std::span<double> z) const { features_.moments(belief_, z); }
  // Feature sums at the ground truth (d of design.md §2); needs labels.
  void ground_truth_moments(std::span<double> d) const;

  std::span<const double> beliefs() const { return belief_; }
  std::vector<double>& messages() { return lambda_; }
  // Message blocks (lambda_{v->a}) updated by one sweep.
  int64_t messages_per_sweep() const { return graph_.num_slots(); }

 private:
  template <class PerExample>
  void for_each_example(PerExample&& work);
  double sum_in_order() const;

  const Dataset& data_;
  ProblemSettings settings_;
  FactorGraph graph_;
  CountingNumbers counting_;
  MessagePassing kernels_;
  FeatureIndex features_;
  std::vector<double> loss_;       // [states], empty without loss augmentation
  std::vector<double> potential_;  // [states + table entries]
  std::vector<double> lambda_;     // message arena
  std::vector<double> belief_;     // [states + table entries]
  std::vector<double> per_example_;
  std::vector<Workspace> workspaces_;  // one per OpenMP thread
};

}  // namespace pdsp
