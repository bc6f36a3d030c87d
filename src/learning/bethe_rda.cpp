#include "pdsp/learning/bethe_rda.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "pdsp/learning/nonlocal_energy.hpp"
#include "pdsp/learning/sweep_to_tolerance.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

BetheRda::BetheRda(LocalProblem& problem, const NonlocalTerms& terms, std::span<const double> psi,
                   const RdaSettings& settings)
    : problem_(problem), terms_(terms), psi_(psi.begin(), psi.end()), settings_(settings) {
  if (static_cast<int64_t>(psi_.size()) != terms.num_weights())
    throw std::logic_error("Bethe-RDA: psi has " + std::to_string(psi_.size()) +
                           " weights, the terms take " + std::to_string(terms.num_weights()));
  const auto states = static_cast<size_t>(problem.data().num_states());
  marginal_.assign(states, 0.0);
  offset_.assign(states, 0.0);
}

void BetheRda::oracle() {
  problem_.set_potential_offset(offset_);
  problem_.set_theta(theta_);
  double change = 0.0;
  sweep_to_tolerance(problem_, settings_.max_sweeps, settings_.sweep_tolerance, change,
                     [](int, double) {});
  smax_sum_ = problem_.evaluate().objective;
  const std::span<const double> belief = problem_.beliefs();
  std::copy(belief.begin(), belief.begin() + static_cast<std::ptrdiff_t>(marginal_.size()),
            marginal_.begin());
  ++oracle_calls_;
}

void BetheRda::start(std::span<const double> theta) {
  theta_.assign(theta.begin(), theta.end());
  mean_slopes_.assign(static_cast<size_t>(problem_.data().num_examples()), TermSlopes{});
  std::fill(offset_.begin(), offset_.end(), 0.0);
  iterations_ = oracle_calls_ = 0;
  oracle();
}

double BetheRda::step() {
  const Dataset& data = problem_.data();
  ++iterations_;
  // The means over mu_0 .. mu_{t-1}: mean_t = mean_{t-1} + (slope(mu_{t-1}) - mean_{t-1}) / t.
  const double t = iterations_;
  const auto average = [t](std::vector<double>& mean, const std::vector<double>& latest) {
    // A term absent until now (a word of the example's length found) had slope 0.
    if (mean.size() < latest.size()) mean.resize(latest.size(), 0.0);
    for (size_t i = 0; i < latest.size(); ++i) mean[i] += (latest[i] - mean[i]) / t;
  };
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    const TermSlopes latest = term_slopes(data, terms_, n, marginal_);
    TermSlopes& mean = mean_slopes_[static_cast<size_t>(n)];
    average(mean.instance, latest.instance);
    average(mean.unigram, latest.unigram);
    average(mean.position, latest.position);
  }
  offset_ = offset_for(psi_);
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

std::vector<double> BetheRda::offset_for(std::span<const double> psi) const {
  const Dataset& data = problem_.data();
  std::vector<double> subgradient(marginal_.size(), 0.0);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    add_weighted_slopes(data, terms_, n, psi, mean_slopes_[static_cast<size_t>(n)], subgradient);
  for (double& g : subgradient) g = -g;
  return subgradient;
}

double BetheRda::label_loss(std::span<double> gradient) const {
  const Dataset& data = problem_.data();
  // A property of the file, the same on every rank: all throw or none.
  if (!data.has_labels())
    throw InputError(data.source() + ": /vars/label: learning the non-local weights needs labels");
  std::vector<double> residual(marginal_.size());  // indicator(y) - mu_t
  for (int64_t v = 0; v < data.num_vars(); ++v)
    for (int32_t s = 0; s < data.card[v]; ++s) {
      const int64_t i = data.state_offset[v] + s;
      // An unobserved variable (-1) is left out of the loss.
      residual[i] = data.label[v] < 0 ? 0.0 : (data.label[v] == s ? 1.0 : 0.0) - marginal_[i];
    }
  for (int64_t n = 0; n < data.num_examples(); ++n)
    add_slope_products(data, terms_, n, mean_slopes_[static_cast<size_t>(n)], residual, gradient);
  return smax_sum_ - problem_.ground_truth_score();
}

double BetheRda::energy() const {
  const Dataset& data = problem_.data();
  double total = 0.0;
  for (int64_t n = 0; n < data.num_examples(); ++n)
    total += nonlocal_energy(data, terms_, psi_, n, marginal_);
  return total;
}

}  // namespace pdsp
