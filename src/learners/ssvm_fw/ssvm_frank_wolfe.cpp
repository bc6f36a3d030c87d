#include "pdsp/learners/ssvm_fw/ssvm_frank_wolfe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
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
      const PassStart start = pass_start_state();
      run_pass(pass);
      refresh_theta();
      if (comm_.size() > 1) combine_passes(start);
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
      // Several ranks: how far along their added passes combine_passes went.
      record.step = comm_.size() > 1 ? last_combination_ : NAN;
      record.seconds = seconds_since(pass_start);
      record.elapsed = seconds_since(started);
      observer.on_iteration(record);
      result.state.iterations_done = pass;
      result.objective = best_primal;
      const StopReason stop = stop_reason(record, observer);
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
  // order, afterwards examples drawn in proportion to their last gap.
  void run_pass(int pass) {
    std::mt19937_64 rng(static_cast<uint64_t>(pass) * 1000003u +
                        static_cast<uint64_t>(comm_.rank()));
    const size_t examples = mixtures_.size();
    if (pass == 1) {
      std::vector<int64_t> order(examples);
      std::iota(order.begin(), order.end(), 0);
      for (size_t i = examples; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
      for (int64_t n : order) gaps_[n] = block_step(n);
      return;
    }
    GapSampler sampler(gaps_);
    for (size_t step = 0; step < examples; ++step) {
      const size_t n = sampler.draw(rng);
      gaps_[n] = block_step(static_cast<int64_t>(n));
      sampler.set(n, gaps_[n]);
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
    // ranks' passes are combined by a line search after them (combine_passes).
    const double curvature = squared_norm(dz_) / config_.C;
    const double available = m.weights[away];
    const double gamma = curvature > 0 ? std::min(available, gain / curvature) : available;
    for (size_t r = 0; r < params_; ++r) theta_[r] -= gamma / config_.C * dz_[r];
    m.weights[to] += gamma;
    m.weights[away] = gamma == available ? 0.0 : m.weights[away] - gamma;
    return true;
  }

  // What combine_passes needs of the state before a pass: theta, e . b and the mixtures'
  // weights (vertices only join during a pass, so the old ones keep their places).
  struct PassStart {
    std::vector<double> theta;
    double expected_loss = 0;
    std::vector<std::vector<double>> weights;
  };

  PassStart pass_start_state() const {
    PassStart start;
    if (comm_.size() == 1) return start;
    start.theta = theta_;
    start.expected_loss = expected_loss_;
    start.weights.reserve(mixtures_.size());
    for (const Mixture& m : mixtures_) start.weights.push_back(m.weights);
    return start;
  }

  // Several ranks each ran a pass from the same theta as if alone; refresh_theta made theta
  // and e . b those of all their passes added. D along the line from the start to that point is
  // a quadratic: its exact maximiser gamma in [0, 1] (1 when the passes do not interfere)
  // moves every mixture that part of the way, and D cannot fall (gamma = 0 keeps the start).
  // Against CoCoA+'s steps sized for P times the curvature, each pass keeps its full steps.
  void combine_passes(const PassStart& start) {
    double slope = expected_loss_ - start.expected_loss;  // dD / dgamma at 0 ...
    double squared = 0;
    for (size_t r = 0; r < params_; ++r) {
      const double change = theta_[r] - start.theta[r];
      slope -= config_.C * start.theta[r] * change;  // ... = dL - C theta . dtheta
      squared += change * change;
    }
    const double curvature = config_.C * squared;
    const double gamma = slope <= 0 ? 0.0 : curvature > 0 ? std::min(1.0, slope / curvature) : 1.0;
    last_combination_ = gamma;
    if (gamma == 1.0) return;
    for (size_t r = 0; r < params_; ++r)
      theta_[r] = start.theta[r] + gamma * (theta_[r] - start.theta[r]);
    expected_loss_ = start.expected_loss + gamma * (expected_loss_ - start.expected_loss);
    for (size_t n = 0; n < mixtures_.size(); ++n) {
      std::vector<double>& weights = mixtures_[n].weights;
      for (size_t k = 0; k < weights.size(); ++k) {
        const double before = k < start.weights[n].size() ? start.weights[n][k] : 0.0;
        weights[k] = before + gamma * (weights[k] - before);
      }
    }
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
  double last_combination_ = 1;    // combine_passes' gamma of the last pass
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
