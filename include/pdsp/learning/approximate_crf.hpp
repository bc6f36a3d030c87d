#pragma once
// A CRF whose marginals and log-partition function come from approximate inference run to
// convergence at fixed parameters: loopy belief propagation (the message update of
// MessagePassing with Bethe counting numbers at eps = 1 is sum-product) or naive mean field.
// It serves the likelihood baselines and their predictions; one rank's examples.
#include <span>
#include <string>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/inference/counting.hpp"
#include "pdsp/inference/factor_graph.hpp"
#include "pdsp/inference/mean_field.hpp"
#include "pdsp/inference/message_passing.hpp"
#include "pdsp/learning/feature_index.hpp"

namespace pdsp {

enum class ApproximateInference { LoopyBp, MeanField };

ApproximateInference parse_inference(const std::string& text);  // "lbp" | "mean-field"
std::string inference_name(ApproximateInference inference);

class ApproximateCrf {
 public:
  ApproximateCrf(const Dataset& data, ApproximateInference inference, int max_sweeps, double tol);

  const Dataset& data() const { return data_; }
  // Uniform mean-field beliefs and zero messages: where inference starts.
  void reset();
  void set_theta(std::span<const double> theta);
  void set_example_theta(int64_t n, std::span<const double> theta);
  // Inference on example n (warm-started from its last state); returns its approximate log Z
  // and leaves its beliefs in beliefs().
  double infer(int64_t n);
  // Inference on every example (OpenMP over examples); returns the sum of the log Z in example
  // order. Collective over the ranks that share the data file: when a potential, message or
  // belief of any rank is not finite, every rank throws the lowest such rank's explanation.
  double infer_all();
  std::span<const double> beliefs() const { return belief_; }
  void moments(std::span<double> z) const { features_.moments(belief_, z); }
  // z += the features of example n weighted by `weight` (a vector over the potential layout).
  void add_example_moments(int64_t n, std::span<const double> weight, std::span<double> z) const {
    features_.add_example_moments(n, weight, z);
  }
  void ground_truth_moments(std::span<double> d) const;

 private:
  double infer(int64_t n, Workspace& w);
  void require_finite() const;
  std::string explain_non_finite() const;

  const Dataset& data_;
  ApproximateInference inference_;
  int max_sweeps_;
  double tol_;
  FactorGraph graph_;
  CountingNumbers bethe_;
  MessagePassing bp_;
  MeanField mean_field_;
  FeatureIndex features_;
  std::vector<double> theta_;  // the theta of the potentials, for error messages
  std::vector<double> potential_, lambda_, belief_, per_example_;
  std::vector<Workspace> workspaces_;
};

}  // namespace pdsp
