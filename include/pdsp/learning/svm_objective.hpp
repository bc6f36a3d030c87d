#pragma once
// The structured SVM objective at eps = 0 on binary pairwise data, exactly:
//
//   F_0(theta) = (C/2) |theta|^2 + sum_n max over b in L_n of (e_n + Phi_n theta) . b - theta . d,
//
// each maximum by the LP oracle (inference/binary_lp.hpp), examples on the threads. The learners
// that report or step on F_0 share it: ssvm-fw (its certificate and the gaps it samples by),
// dlpw and pegasos (their objective; pegasos also its subgradients).
#include <functional>
#include <span>
#include <vector>

#include "pdsp/data/dataset.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/inference/binary_lp.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class SvmObjective {
 public:
  // Collective: d is summed over the ranks. `data` must outlive it and be binary pairwise.
  SvmObjective(const Dataset& data, double C, double loss_weight, Communicator& comm);

  const FeatureIndex& features() const { return features_; }
  std::span<const double> loss() const { return loss_; }        // e, per state
  std::span<const double> truth_moments() const { return d_; }  // d over all ranks
  const Regularizer& regularizer() const { return regularizer_; }

  // u = e + Phi theta at example n's positions of `potential` (the slice's layout).
  void example_potentials(int64_t n, std::span<const double> theta,
                          std::span<double> potential) const {
    features_.example_potentials(n, theta, loss_, potential);
  }
  // F_0(theta) over all ranks (collective). `each(n, best, potential)` is called, on the thread
  // that computed it, with each local example's maximum and the potentials it was taken at.
  using ExampleMaximum = std::function<void(int64_t, double, std::span<const double>)>;
  double value(std::span<const double> theta, const ExampleMaximum& each = {});
  // A vertex of example n's local polytope where potential . mu is largest. Single-threaded.
  HalfIntegralVertex maximise(int64_t n, std::span<const double> potential) {
    return oracles_[0].maximise(data_, n, potential);
  }
  // z += Phi_n (mu - 1_{y_n}) at the oracle's vertex mu of example n at theta: a subgradient of
  // example n's term of F_0 (without the regulariser's). Single-threaded.
  void add_subgradient(int64_t n, std::span<const double> theta, std::span<double> z);

 private:
  const Dataset& data_;
  Regularizer regularizer_;
  Communicator& comm_;
  FeatureIndex features_;
  std::vector<BinaryLpOracle> oracles_;  // one per thread
  std::vector<double> loss_;
  std::vector<double> potential_;  // [states | table entries], written example by example
  std::vector<double> weight_;     // a vertex less the labelling, in the same layout
  std::vector<double> d_;
};

}  // namespace pdsp
