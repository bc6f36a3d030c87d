#pragma once
// What the problems on a rank's slice are built on: LocalProblem (the primal-dual learners) and
// ApproximateCrf (the likelihood baselines) each hold one. It owns the factor graph's slot index,
// the counting numbers, the general message-passing kernels on them, the potential model with
// the potentials it computes from theta (and the bound that spares them a scan for overflow),
// and the ground truth as weights in the potential layout; the problems add their messages,
// beliefs and the loops that run the kernels.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/allocation.hpp"
#include "pdsp/data/dataset.hpp"
#include "pdsp/features/ground_truth.hpp"
#include "pdsp/features/potential_model.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/message_passing.hpp"

namespace pdsp {

struct EngineSettings {
  CountingMode counting = CountingMode::Auto;
  double epsilon = 1.0;      // the problem's eps, which decides CountingMode::Auto
  double temperature = 1.0;  // where the general kernels start (set_temperature moves them)
  std::string source;        // the data file, for error messages
};

class InferenceEngine {
 public:
  // `model` null: the data's features (FeatureIndex, linear).
  InferenceEngine(const Dataset& data, const EngineSettings& settings,
                  std::unique_ptr<const PotentialModel> model);

  const Dataset& data() const { return data_; }
  const std::string& source() const { return source_; }
  const FactorGraph& graph() const { return graph_; }
  const CountingNumbers& counting() const { return counting_; }
  MessagePassing& general() { return general_; }
  const MessagePassing& general() const { return general_; }
  const PotentialModel& model() const { return *model_; }

  // u = base + f(theta) in the layout [states | table entries] (PotentialModel::forward), base
  // empty or [states] with max |base| = `largest_base`; the tables of the factors with
  // skip_factor[a] != 0 are left as they are.
  void set_theta(std::span<const double> theta, std::span<const double> base, double largest_base,
                 std::span<const uint8_t> skip_factor = {});
  // Example n's potentials alone (base empty or [states]); the others stay.
  void set_example_theta(int64_t n, std::span<const double> theta, std::span<const double> base);
  // The listed examples' potentials alone, as set_theta, whose overflow checks then hold for
  // them (a stochastic learner's batch).
  void set_examples_theta(std::span<const int64_t> examples, std::span<const double> theta,
                          std::span<const double> base, double largest_base);
  // The theta of the potentials, for gradients through the model and for error messages.
  std::span<const double> theta() const { return theta_; }
  double* potentials() { return potential_.data(); }
  const ZeroedArray<double>& potential_array() const { return potential_; }
  // After set_theta: no potential can have overflowed (base and the model's bound are far
  // inside the range of doubles), and whether every potential is finite (scanned only when
  // that bound does not hold).
  bool potentials_bounded() const { return potentials_bounded_; }
  bool potentials_finite() const { return potentials_finite_; }

  // The labelled positions of the regions this rank owns (ground_truth.hpp), and their
  // indicator in the potential layout; each built at its first call and kept. Need labels.
  const GroundTruth& ground_truth() const;
  std::span<const double> truth_weight() const;
  // d = J(theta)^T 1_y at the current theta, over all examples (from the positions alone) or
  // those listed (from the indicator).
  void ground_truth_moments(std::span<double> d, std::span<const int64_t> examples = {}) const;

 private:
  const Dataset& data_;
  std::string source_;
  FactorGraph graph_;
  CountingNumbers counting_;
  MessagePassing general_;
  std::unique_ptr<const PotentialModel> model_;
  std::vector<double> theta_;
  ZeroedArray<double> potential_;  // [states + table entries]
  bool potentials_bounded_ = true;
  bool potentials_finite_ = true;
  mutable std::optional<GroundTruth> ground_truth_;
  mutable ZeroedArray<double> truth_weight_;
};

}  // namespace pdsp
