#pragma once
// Bethe-RDA (Vilnis et al., AISTATS 2015, section 6, Algorithm 1 with beta = 0): minimises, for
// every example of a LocalProblem's slice at once,
//   J(mu) = -<u(theta), mu> - H_B(mu) + L_psi(mu)
// over the marginals, u the problem's potentials at theta and H_B the entropy of its counting
// numbers (at epsilon = 1 with Bethe numbers on a tree: the exact marginal polytope and entropy).
// Regularised dual averaging with the entropy as its regulariser: the average gbar_t of the
// subgradients of L_psi at mu_0 .. mu_{t-1} enters the potentials as the offset -gbar_t, and
// mu_t is the problem's marginal inference there (sweeps to convergence, then the beliefs). The
// average of the subgradients is kept as the average of each term's unit slopes (TermSlopes),
// which gives the offset at other weights too: what learning psi differentiates. The
// average of the iterates converges at O(ln t / t) in J when L_psi is convex (the paper's
// propositions 3 and 4); mu_t itself is what the paper decodes from.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/data/nonlocal_terms.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/nonlocal_energy.hpp"

namespace pdsp {

struct RdaSettings {
  int iterations = 10;             // T: at most T + 1 oracle calls
  double tolerance = 1e-6;         // stop once no variable's marginal moves by more than this
  int max_sweeps = 1000;           // per oracle call
  double sweep_tolerance = 1e-10;  // an oracle call ends when no message moves by more
};

class BetheRda {
 public:
  // `problem` runs at its own epsilon and counting numbers; its potential offset is BetheRda's
  // from start() on. psi: NonlocalTerms' layout, >= 0.
  BetheRda(LocalProblem& problem, const NonlocalTerms& terms, std::span<const double> psi,
           const RdaSettings& settings);

  // mu_0: inference at theta alone (no offset). Collective over the data's ranks.
  void start(std::span<const double> theta);
  // One iteration: gbar_t from mu_{t-1}, then mu_t. Returns the largest change of a variable's
  // marginal on any rank. Collective.
  double step();
  // start, then steps until T iterations or the tolerance; returns the oracle calls made.
  int run(std::span<const double> theta);

  // mu_t, the variables' marginals in the [states] layout.
  std::span<const double> marginals() const { return marginal_; }
  // -gbar_t: the last oracle call's potentials are u(theta) plus this ([states]).
  std::span<const double> offset() const { return offset_; }
  // sum over this rank's examples of L_psi(mu_t).
  double energy() const;
  // The offset the averaged unit slopes give at weights `psi` (offset() at the run's own).
  std::vector<double> offset_for(std::span<const double> psi) const;
  // Over this rank's examples, at eps = 1 (where the smax terms are log Z): the negative
  // log-likelihood of the labels under the last oracle call's potentials, -log Q(y), and its
  // gradient with respect to psi with the averaged slopes held fixed, added to `gradient`
  // ([psi's length]): d/dpsi_w = <weight w's averaged unit slopes, indicator(y) - mu_t>.
  double label_loss(std::span<double> gradient) const;
  int iterations() const { return iterations_; }
  int oracle_calls() const { return oracle_calls_; }

 private:
  void oracle();

  LocalProblem& problem_;
  const NonlocalTerms& terms_;
  std::vector<double> psi_;
  RdaSettings settings_;
  std::vector<double> theta_;
  std::vector<double> marginal_;         // mu_t [states]
  std::vector<TermSlopes> mean_slopes_;  // per example, over mu_0 .. mu_{t-1}
  std::vector<double> offset_;           // -gbar_t
  double smax_sum_ = 0.0;                // the last oracle call's objective()
  int iterations_ = 0;
  int oracle_calls_ = 0;
};

}  // namespace pdsp
