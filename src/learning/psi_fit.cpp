#include "pdsp/learning/psi_fit.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/util/clock.hpp"
#include "pdsp/util/field.hpp"

namespace pdsp {
namespace {

// The loss and its gradient at psi, both means over all ranks' examples, from one Bethe-RDA run.
PsiEpoch measure(LocalProblem& problem, const NonlocalTerms& terms, std::span<const double> theta,
                 const std::vector<double>& psi, const RdaSettings& rda_settings,
                 std::vector<double>& gradient) {
  const auto started = Clock::now();
  BetheRda rda(problem, terms, psi, rda_settings);
  PsiEpoch epoch;
  epoch.oracle_calls = rda.run(theta);
  // [loss, gradient..., examples] summed over the ranks in one allreduce.
  std::vector<double> sums(psi.size() + 2, 0.0);
  sums.front() = rda.label_loss(std::span<double>(sums).subspan(1, psi.size()));
  sums.back() = static_cast<double>(problem.data().num_examples());
  problem.data().communicator().allreduce_sum(std::span<double>(sums));
  const double examples = std::max(sums.back(), 1.0);
  epoch.loss = sums.front() / examples;
  gradient.assign(sums.begin() + 1, sums.end() - 1);
  for (size_t w = 0; w < psi.size(); ++w) {
    gradient[w] /= examples;
    epoch.projected_gradient =
        std::max(epoch.projected_gradient, std::abs(psi[w] - std::max(0.0, psi[w] - gradient[w])));
  }
  epoch.psi = psi;
  epoch.seconds = seconds_since(started);
  return epoch;
}

}  // namespace

PsiFitResult fit_psi(LocalProblem& problem, const NonlocalTerms& terms,
                     std::span<const double> theta, std::vector<double> psi,
                     const PsiFitSettings& settings,
                     const std::function<void(const PsiEpoch&)>& report) {
  PsiFitResult result;
  std::vector<double> gradient, squares(psi.size(), 0.0);
  for (int epoch = 0;; ++epoch) {
    PsiEpoch measured = measure(problem, terms, theta, psi, settings.rda, gradient);
    measured.epoch = epoch;
    report(measured);
    // Every rank measured the same sums, so every rank keeps the same epoch.
    if (epoch == 0 || measured.loss < result.best.loss) result.best = measured;
    result.epochs_run = epoch;
    if (measured.projected_gradient <= settings.tolerance) {
      result.converged = true;
      result.stop =
          "converged: no weight's projected gradient above " + shortest_text(settings.tolerance);
      break;
    }
    if (epoch == settings.epochs) {
      result.stop = "stopped after " + std::to_string(settings.epochs) + " epochs (--psi-epochs)";
      break;
    }
    for (size_t w = 0; w < psi.size(); ++w) {
      squares[w] += gradient[w] * gradient[w];
      if (squares[w] > 0)
        psi[w] = std::max(0.0, psi[w] - settings.step * gradient[w] / std::sqrt(squares[w]));
    }
  }
  result.psi = result.best.psi;
  return result;
}

}  // namespace pdsp
