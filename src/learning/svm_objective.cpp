#include "pdsp/learning/svm_objective.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>

#include "pdsp/learning/problem_setup.hpp"

namespace pdsp {

SvmObjective::SvmObjective(const Dataset& data, double C, double loss_weight, Communicator& comm)
    : data_(data),
      regularizer_{C, 2.0},
      comm_(comm),
      features_(data),
      oracles_(static_cast<size_t>(omp_get_max_threads())),
      loss_(loss_augmentation(data, loss_weight)),
      potential_(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0.0),
      weight_(potential_.size(), 0.0),
      d_(static_cast<size_t>(data.num_params), 0.0) {
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    add_vertex_beliefs(data, n, labelled_vertex(data, n), 1.0, weight_);
    features_.add_example_moments(n, weight_, d_);
    add_vertex_beliefs(data, n, labelled_vertex(data, n), -1.0, weight_);
  }
  comm_.allreduce_sum(std::span<double>(d_));
}

double SvmObjective::value(std::span<const double> theta, const ExampleMaximum& each) {
  const int64_t examples = data_.num_examples();
  std::vector<double> best(static_cast<size_t>(examples));
#pragma omp parallel
  {
    BinaryLpOracle& oracle = oracles_[static_cast<size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 16)
    for (int64_t n = 0; n < examples; ++n) {
      // Each example writes its own positions of the shared array.
      example_potentials(n, theta, potential_);
      best[n] = vertex_score(data_, n, oracle.maximise(data_, n, potential_), potential_);
      if (each) each(n, best[n], potential_);
    }
  }
  double sums[1] = {std::accumulate(best.begin(), best.end(), 0.0)};
  comm_.allreduce_sum(std::span<double>(sums));
  double truth = 0;
  for (size_t r = 0; r < d_.size(); ++r) truth += theta[r] * d_[r];
  return regularizer_.value(theta) + sums[0] - truth;
}

void SvmObjective::add_subgradient(int64_t n, std::span<const double> theta, std::span<double> z) {
  example_potentials(n, theta, potential_);
  const HalfIntegralVertex vertex = maximise(n, potential_);
  const HalfIntegralVertex truth = labelled_vertex(data_, n);
  add_vertex_beliefs(data_, n, vertex, 1.0, weight_);
  add_vertex_beliefs(data_, n, truth, -1.0, weight_);
  features_.add_example_moments(n, weight_, z);
  // Back to zero at n's positions: the same two vertices, taken away.
  add_vertex_beliefs(data_, n, vertex, -1.0, weight_);
  add_vertex_beliefs(data_, n, truth, 1.0, weight_);
}

}  // namespace pdsp
