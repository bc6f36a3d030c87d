#include "pdsp/learning/bethe_rda.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "pdsp/learning/nonlocal_energy.hpp"

namespace pdsp {

BetheRda::BetheRda(LocalProblem& problem, const NonlocalTerms& terms, std::span<const double> psi,
                   const RdaSettings& settings)
    : problem_(problem), terms_(terms), psi_(psi.begin(), psi.end()), settings_(settings) {
  if (static_cast<int64_t>(psi_.size()) != terms.num_weights())
    throw std::logic_error("Bethe-RDA: psi has " + std::to_string(psi_.size()) +
                           " weights, the terms take " + std::to_string(terms.num_weights()));
  const auto states = static_cast<size_t>(problem.data().num_states());
  marginal_.assign(states, 0.0);
  mean_subgradient_.assign(states, 0.0);
  offset_.assign(states, 0.0);
}

void BetheRda::oracle() {
  problem_.set_potential_offset(offset_);
  problem_.set_theta(theta_);
  double change[1] = {INFINITY};
  for (int sweeps = 0; sweeps < settings_.max_sweeps && change[0] > settings_.sweep_tolerance;
       ++sweeps) {
    change[0] = problem_.sweep(1);
    problem_.data().communicator().allreduce({}, change);
  }
  problem_.evaluate();
  const std::span<const double> belief = problem_.beliefs();
  std::copy(belief.begin(), belief.begin() + static_cast<std::ptrdiff_t>(marginal_.size()),
            marginal_.begin());
  ++oracle_calls_;
}

void BetheRda::start(std::span<const double> theta) {
  theta_.assign(theta.begin(), theta.end());
  std::fill(mean_subgradient_.begin(), mean_subgradient_.end(), 0.0);
  std::fill(offset_.begin(), offset_.end(), 0.0);
  iterations_ = oracle_calls_ = 0;
  oracle();
}

double BetheRda::step() {
  const Dataset& data = problem_.data();
  std::vector<double> subgradient(marginal_.size(), 0.0);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    nonlocal_energy(data, terms_, psi_, n, marginal_, subgradient);
  ++iterations_;
  // gbar_t = ((t - 1) gbar_{t-1} + g(mu_{t-1})) / t
  const double t = iterations_;
  for (size_t i = 0; i < subgradient.size(); ++i) {
    mean_subgradient_[i] += (subgradient[i] - mean_subgradient_[i]) / t;
    offset_[i] = -mean_subgradient_[i];
  }
  const std::vector<double> before = marginal_;
  oracle();
  double change[1] = {0.0};
  for (size_t i = 0; i < marginal_.size(); ++i)
    change[0] = std::max(change[0], std::abs(marginal_[i] - before[i]));
  data.communicator().allreduce({}, change);
  return change[0];
}

int BetheRda::run(std::span<const double> theta) {
  start(theta);
  while (iterations_ < settings_.iterations && step() > settings_.tolerance) {
  }
  return oracle_calls_;
}

double BetheRda::energy() const {
  const Dataset& data = problem_.data();
  double total = 0.0;
  for (int64_t n = 0; n < data.num_examples(); ++n)
    total += nonlocal_energy(data, terms_, psi_, n, marginal_);
  return total;
}

}  // namespace pdsp
