#include "pdsp/learners/ssvm_fw/ssvm_frank_wolfe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

#include "pdsp/inference/binary_lp.hpp"
#include "pdsp/learning/svm_objective.hpp"
#include "pdsp/optim/gap_sampler.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

// Pairwise steps inside an example's mixture after each oracle step: no oracle call, a
// potential evaluation and a moment product each. On yeast three per example reach a given
// gap in fewer passes than none (docs/benchmarks.md).
constexpr int kMixtureSteps = 3;

// With several ranks, each rank's block steps between two exchanges of theta: each rank sees
// the others' steps at most this many of their steps late. On yeast with two ranks (C 1, to a
// gap of 1e-3) 2, 4 and 8 took 312, 337 and 350 passes and the same time (58 s); exchanging
// once a pass took over 1,000 (docs/benchmarks.md). An exchange is one allreduce of theta.
constexpr int64_t kStepsPerExchange = 4;

}  // namespace

class SsvmFrankWolfe::Solver {
 public:
  // An example's beliefs: a mixture of vertices of its local polytope, weights summing to one.
  // During a pass vertices only join (a weight may fall to 0); pruning happens between passes.
  struct Mixture {
    std::vector<HalfIntegralVertex> vertices;
    std::vector<double> weights;
  };

  Solver(const Dataset& data, const SsvmConfig& config, Communicator& comm)
      : data_(data),
        config_(config),
        comm_(comm),
        objective_(data, config.C, config.loss_weight, comm),
        params_(static_cast<size_t>(data.num_params)),
        potential_(static_cast<size_t>(data.num_states() + data.num_table_entries()), 0.0),
        weight_(potential_.size(), 0.0),
        dz_(params_, 0.0),
        theta_(params_, 0.0),
        mixtures_(static_cast<size_t>(data.num_examples())),
        gaps_(mixtures_.size(), 0.0) {
    for (int64_t n = 0; n < data.num_examples(); ++n)
      mixtures_[n] = Mixture{{labelled_vertex(data, n)}, {1.0}};
    if (comm.size() > 1) {
      int64_t examples = data.num_examples();
      comm.allreduce_sum(std::span<int64_t>(&examples, 1));
      const int64_t per_round = kStepsPerExchange * comm.size();
      exchanges_per_pass_ = std::max<int64_t>(1, (examples + per_round - 1) / per_round);
      touched_.assign(mixtures_.size(), false);
    }
  }

  TrainResult run(TrainingObserver& observer) {
    TrainResult result;
    result.stop = stop_iteration_limit();
    const auto started = Clock::now();
    refresh_theta();
    std::vector<double> average = theta_;
    double best_primal = INFINITY;
    for (int pass = 1; pass <= config_.max_passes; ++pass) {
      const auto pass_start = Clock::now();
      run_pass(pass);
      refresh_theta();
      prune();
      // Any theta's F_0 bounds the optimum from above: the iterate's, and the running average
      // of the iterates (weights 2 / (pass + 2), as Lacoste-Julien et al. 2013), which is
      // smoother. The best seen is the model.
      const double mix = 2.0 / (pass + 2.0);
      for (size_t r = 0; r < params_; ++r) average[r] += mix * (theta_[r] - average[r]);
      for (const std::vector<double>* candidate : {&theta_, &average}) {
        const double primal = primal_objective(*candidate, candidate == &theta_);
        if (primal < best_primal) {
          best_primal = primal;
          result.state.theta = *candidate;
        }
      }
      IterationRecord record;
      record.iteration = pass;
      record.objective = record.objective_after_step = best_primal;
      // At theta = (d - z) / C the conjugate term |z - d|^2 / (2C) is the regulariser of theta.
      record.dual = expected_loss_ - objective_.regularizer().value(theta_);
      record.gap = best_primal - record.dual;
      record.gap_certified = true;
      record.temperature = 0;
      record.grad_norm = NAN;  // F_0 is not differentiable; the gap is the optimality test
      // Several ranks: the shortest of the pass's exchange steps (1: the ranks' steps added).
      record.step = exchanging() ? smallest_combination_ : NAN;
      record.seconds = seconds_since(pass_start);
      record.elapsed = seconds_since(started);
      observer.on_iteration(record);
      result.state.iterations_done = pass;
      result.objective = best_primal;
      const StopReason stop =
          finish_iteration(observer, result.state, record, stop_reason(record, observer));
      if (stop.stops()) {
        result.stop = stop;
        break;
      }
    }
    return result;
  }

 private:
  static double squared_norm(const std::vector<double>& x) {
    double sum = 0;
    for (double v : x) sum += v * v;
    return sum;
  }

  // No stop to go on. The same on every rank: the gap is global and the stop flags are reduced.
  StopReason stop_reason(const IterationRecord& record, TrainingObserver& observer) {
    if (record.gap <= config_.tol * std::max(1.0, std::abs(record.objective)))
      return stop_converged("converged: primal-dual gap at eps = 0 below tol (exact LP oracle)");
    // The pass loop ends at max_passes itself.
    return limit_or_signal(comm_, observer.stop_requested(), record.elapsed, config_.max_seconds,
                           record.iteration, std::numeric_limits<int>::max());
  }

  // One block step per example of this rank: on the first pass each example once in a shuffled
  // order, afterwards examples drawn in proportion to their last gap. With several ranks the
  // steps are cut into the same number of rounds on every rank, each ended by exchange().
  void run_pass(int pass) {
    // Seed 1 keeps the draws of the builds before --seed reached this learner.
    std::mt19937_64 rng(static_cast<uint64_t>(pass) * 1000003u +
                        static_cast<uint64_t>(comm_.rank()) +
                        static_cast<uint64_t>(config_.seed - 1) * 0x9e3779b97f4a7c15ull);
    const int64_t examples = static_cast<int64_t>(mixtures_.size());
    std::vector<int64_t> order;
    std::optional<GapSampler> sampler;
    if (pass == 1) {
      order.resize(examples);
      std::iota(order.begin(), order.end(), 0);
      for (int64_t i = examples; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    } else {
      sampler.emplace(gaps_);
    }
    const auto step = [&](int64_t s) {
      const int64_t n = sampler ? static_cast<int64_t>(sampler->draw(rng)) : order[s];
      gaps_[n] = block_step(n);
      if (sampler) sampler->set(static_cast<size_t>(n), gaps_[n]);
    };
    if (!exchanging()) {
      for (int64_t s = 0; s < examples; ++s) step(s);
      return;
    }
    smallest_combination_ = 1;
    for (int64_t round = 0; round < exchanges_per_pass_; ++round) {
      start_round();
      const int64_t end = (round + 1) * examples / exchanges_per_pass_;
      for (int64_t s = round * examples / exchanges_per_pass_; s < end; ++s) step(s);
      exchange();
    }
  }

  // The oracle's vertex for example n at the current theta, a pairwise step to it, then pairwise
  // steps inside the mixture. Returns the example's gap before the step (its share of F - D).
  double block_step(int64_t n) {
    Mixture& m = mixtures_[n];
    objective_.example_potentials(n, theta_, potential_);
    HalfIntegralVertex best = objective_.maximise(n, potential_);
    size_t to = std::find(m.vertices.begin(), m.vertices.end(), best) - m.vertices.begin();
    if (to == m.vertices.size()) {
      m.vertices.push_back(std::move(best));
      m.weights.push_back(0.0);
    }
    std::vector<double> scores = mixture_scores(n, m, potential_);
    const double gap = scores[to] - mixture_value(m, scores);
    for (int k = 0; k <= kMixtureSteps; ++k) {
      if (k > 0) {
        objective_.example_potentials(n, theta_, potential_);
        scores = mixture_scores(n, m, potential_);
        to = std::max_element(scores.begin(), scores.end()) - scores.begin();
      }
      if (!pairwise_step(n, m, to, scores)) break;
    }
    return gap;
  }

  // sum_k w_k scores[k]: the mixture's own score.
  static double mixture_value(const Mixture& m, const std::vector<double>& scores) {
    double value = 0;
    for (size_t k = 0; k < scores.size(); ++k) value += m.weights[k] * scores[k];
    return value;
  }

  std::vector<double> mixture_scores(int64_t n, const Mixture& m,
                                     std::span<const double> potential) const {
    std::vector<double> scores(m.vertices.size());
    for (size_t k = 0; k < scores.size(); ++k)
      scores[k] = vertex_score(data_, n, m.vertices[k], potential);
    return scores;
  }

  // Moves weight from the mixture's worst vertex in use to vertex `to`, by the exact maximiser
  // of D along that line, clipped to the weight there is. Returns false when no vertex in use
  // scores below `to` (beyond round-off).
  bool pairwise_step(int64_t n, Mixture& m, size_t to, const std::vector<double>& scores) {
    size_t away = to;
    for (size_t k = 0; k < scores.size(); ++k)
      if (m.weights[k] > 0 && (away == to || scores[k] < scores[away])) away = k;
    const double gain = scores[to] - scores[away];  // dD / dgamma at gamma = 0
    if (away == to || !(gain > 1e-14 * (std::abs(scores[to]) + std::abs(scores[away]))))
      return false;
    clear_example_weights(n);
    add_vertex_beliefs(data_, n, m.vertices[to], 1.0, weight_);
    add_vertex_beliefs(data_, n, m.vertices[away], -1.0, weight_);
    std::fill(dz_.begin(), dz_.end(), 0.0);
    objective_.features().add_example_moments(n, weight_, dz_);
    // -d2D / dgamma2: the exact maximiser along the line, as if this rank were alone; the
    // ranks' steps are combined by a line search at the end of the round (exchange).
    const double curvature = squared_norm(dz_) / config_.C;
    const double available = m.weights[away];
    const double gamma = curvature > 0 ? std::min(available, gain / curvature) : available;
    if (exchanging()) note_round_step(n, gamma);
    for (size_t r = 0; r < params_; ++r) theta_[r] -= gamma / config_.C * dz_[r];
    m.weights[to] += gamma;
    m.weights[away] = gamma == available ? 0.0 : m.weights[away] - gamma;
    return true;
  }

  bool exchanging() const { return exchanges_per_pass_ > 0; }

  void start_round() {
    round_start_theta_ = theta_;
    round_loss_change_ = 0;
  }

  // Before example n's weights first change in a round: keeps them, so that exchange() can
  // scale the round's change. Adds the step's change of e . b (weight_ holds b_to - b_away).
  void note_round_step(int64_t n, double gamma) {
    if (!touched_[n]) {
      touched_[n] = true;
      round_start_weights_.emplace_back(n, mixtures_[n].weights);
    }
    const std::span<const double> loss = objective_.loss();
    const int64_t first = data_.state_offset[data_.var_offset[n]];
    const int64_t last = data_.state_offset[data_.var_offset[n + 1]];
    double slope = 0;
    for (int64_t i = first; i < last; ++i) slope += loss[i] * weight_[i];
    round_loss_change_ += gamma * slope;
  }

  // Every rank took its round's steps from the same theta as if alone. D along the line from
  // the round's start to all their steps added is a quadratic in gamma: its exact maximiser in
  // [0, 1] (1 when the steps do not interfere) moves every changed mixture that part of the way,
  // and D cannot fall (gamma = 0 keeps the start). One allreduce of theta's change and e . b's.
  void exchange() {
    std::vector<double> change(params_ + 1);
    for (size_t r = 0; r < params_; ++r) change[r] = theta_[r] - round_start_theta_[r];
    change[params_] = round_loss_change_;
    comm_.allreduce_sum(std::span<double>(change));
    double slope = change[params_];  // dD / dgamma at 0 = dL - C theta . dtheta
    double squared = 0;
    for (size_t r = 0; r < params_; ++r) {
      slope -= config_.C * round_start_theta_[r] * change[r];
      squared += change[r] * change[r];
    }
    const double curvature = config_.C * squared;
    const double gamma = slope <= 0 ? 0.0 : curvature > 0 ? std::min(1.0, slope / curvature) : 1.0;
    smallest_combination_ = std::min(smallest_combination_, gamma);
    for (size_t r = 0; r < params_; ++r) theta_[r] = round_start_theta_[r] + gamma * change[r];
    expected_loss_ += gamma * change[params_];
    for (auto& [n, before] : round_start_weights_) {
      touched_[n] = false;
      std::vector<double>& weights = mixtures_[n].weights;  // vertices only joined
      for (size_t k = 0; k < weights.size(); ++k) {
        const double start = k < before.size() ? before[k] : 0.0;
        weights[k] = start + gamma * (weights[k] - start);
      }
    }
    round_start_weights_.clear();
  }

  void clear_example_weights(int64_t n) {
    std::fill(weight_.begin() + data_.state_offset[data_.var_offset[n]],
              weight_.begin() + data_.state_offset[data_.var_offset[n + 1]], 0.0);
    const int64_t states = data_.num_states();
    std::fill(weight_.begin() + states + data_.table_offset[data_.factor_offset[n]],
              weight_.begin() + states + data_.table_offset[data_.factor_offset[n + 1]], 0.0);
  }

  void prune() {
    for (Mixture& m : mixtures_) {
      size_t kept = 0;
      for (size_t k = 0; k < m.vertices.size(); ++k)
        if (m.weights[k] > 0) {
          if (kept != k) m.vertices[kept] = std::move(m.vertices[k]);
          m.weights[kept++] = m.weights[k];
        }
      m.vertices.resize(kept);
      m.weights.resize(kept);
    }
  }

  // theta = (d - z(b)) / C and the expected loss e . b, recomputed from the mixtures over all
  // ranks, so that the round-off of the steps' updates does not build up.
  void refresh_theta() {
    std::fill(weight_.begin(), weight_.end(), 0.0);
    std::vector<double> sums(params_ + 1, 0.0);
    for (size_t n = 0; n < mixtures_.size(); ++n) {
      const int64_t example = static_cast<int64_t>(n);
      for (size_t k = 0; k < mixtures_[n].vertices.size(); ++k)
        add_vertex_beliefs(data_, example, mixtures_[n].vertices[k], mixtures_[n].weights[k],
                           weight_);
      objective_.features().add_example_moments(example, weight_, sums);
    }
    const std::span<const double> loss = objective_.loss();
    for (size_t i = 0; i < loss.size(); ++i) sums[params_] += loss[i] * weight_[i];
    comm_.allreduce_sum(std::span<double>(sums));
    const std::span<const double> d = objective_.truth_moments();
    for (size_t r = 0; r < params_; ++r) theta_[r] = (d[r] - sums[r]) / config_.C;
    expected_loss_ = sums[params_];
  }

  // F_0(theta) over all ranks by the oracle (SvmObjective). With `record_gaps` (theta is the
  // mixtures' own) each example's gap, max - (its mixture's score), goes to gaps_.
  double primal_objective(const std::vector<double>& theta, bool record_gaps) {
    if (!record_gaps) return objective_.value(theta);
    return objective_.value(theta, [&](int64_t n, double best, std::span<const double> potential) {
      gaps_[n] = best - mixture_value(mixtures_[n], mixture_scores(n, mixtures_[n], potential));
    });
  }

  const Dataset& data_;
  const SsvmConfig config_;
  Communicator& comm_;
  SvmObjective objective_;  // F_0 by the oracle, the features, e and d
  size_t params_;
  std::vector<double> potential_;  // u = e + Phi theta, written example by example
  std::vector<double> weight_;     // beliefs (or a difference of two) in the potential layout
  std::vector<double> dz_;         // Phi times a difference of two vertices
  std::vector<double> theta_;      // theta(b)
  double expected_loss_ = 0;       // e . b over all ranks
  // Several ranks (exchanging()): the rounds of a pass and the state at a round's start.
  int64_t exchanges_per_pass_ = 0;
  std::vector<double> round_start_theta_;
  double round_loss_change_ = 0;  // this rank's change of e . b in the round
  std::vector<std::pair<int64_t, std::vector<double>>> round_start_weights_;
  std::vector<bool> touched_;        // example n's weights are in round_start_weights_
  double smallest_combination_ = 1;  // exchange()'s smallest gamma in the last pass
  std::vector<Mixture> mixtures_;
  std::vector<double> gaps_;  // per example, from its last step or evaluation
};

SsvmFrankWolfe::SsvmFrankWolfe(const Dataset& slice, const SsvmConfig& config, Communicator& comm) {
  run_collectively(comm, [&] {
    if (!slice.has_labels())
      throw InputError(slice.source() + ": /vars/label: training needs ground-truth labels");
  });
  solver_ = std::make_unique<Solver>(slice, config, comm);
}

SsvmFrankWolfe::~SsvmFrankWolfe() = default;

TrainResult SsvmFrankWolfe::run(TrainingObserver& observer) {
  return solver_->run(observer);
}

TrainResult train_ssvm_frank_wolfe(const Dataset& slice, const SsvmConfig& config,
                                   Communicator& comm, TrainingObserver& observer) {
  return SsvmFrankWolfe(slice, config, comm).run(observer);
}

}  // namespace pdsp
