#include "pdsp/learning/approximate_crf.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "pdsp/learning/non_finite_report.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

ApproximateInference parse_inference(const std::string& text) {
  if (text == "lbp") return ApproximateInference::LoopyBp;
  if (text == "mean-field") return ApproximateInference::MeanField;
  throw InputError("inference '" + text + "' is not one of " + kApproximateInferenceNames);
}

std::string inference_name(ApproximateInference inference) {
  return inference == ApproximateInference::LoopyBp ? "lbp" : "mean-field";
}

namespace {

// A damped message is half its old value and half its update: the fixed points are the same.
constexpr double kDamping = 0.5;
// A start pulled towards state s adds this to every variable's state s for kPullSweeps sweeps,
// enough to drag strongly coupled graphs into the basin of the fixed point that favours s.
constexpr double kPull = 8.0;
constexpr int kPullSweeps = 5;
// Approximate log Z of two fixed points closer than this (relative) count as the same point.
constexpr double kSameFixedPoint = 1e-6;
// The annealed start runs inference at theta scaled by k / kAnnealSteps, k = 1 .. kAnnealSteps.
constexpr int kAnnealSteps = 10;

EngineSettings bethe_at_one(const Dataset& data) {
  EngineSettings settings;
  settings.counting = CountingMode::Bethe;
  settings.epsilon = 1.0;
  settings.temperature = 1.0;
  settings.source = data.source();
  return settings;
}

}  // namespace

ApproximateCrf::ApproximateCrf(const Dataset& data, ApproximateInference inference, int max_sweeps,
                               double tol)
    : data_(data),
      inference_(inference),
      max_sweeps_(max_sweeps),
      tol_(tol),
      // Loopy BP is the kernels with Bethe numbers at eps = 1.
      engine_(data, bethe_at_one(data), nullptr),
      graph_(engine_.graph()),
      chunks_(chunk_classes(colour_variables(data, graph_), graph_)),
      loopy_(engine_, chunks_),
      mean_field_(data, graph_, chunks_),
      potential_(engine_.potentials(), engine_.potential_array().size()),
      belief_(engine_.potential_array().size(), 0.0),
      per_example_(static_cast<size_t>(data.num_examples()), 0.0),
      cold_log_z_(static_cast<size_t>(data.num_examples()), 0.0),
      cold_converged_(static_cast<size_t>(data.num_examples()), 0),
      converged_(static_cast<size_t>(data.num_examples()), 1),
      sweeps_(static_cast<size_t>(data.num_examples()), 0) {
  reset();
  accept();
  for (int t = 0; t < omp_get_max_threads(); ++t) {
    workspaces_.emplace_back(graph_);
    scratch_.emplace_back();
  }
}

void ApproximateCrf::reset() {
  for (int64_t n = 0; n < data_.num_examples(); ++n) mean_field_.reset(n, belief_.data());
  std::fill(loopy_.messages().begin(), loopy_.messages().end(), 0.0);
}

void ApproximateCrf::accept() {
  accepted_ = state();
}

void ApproximateCrf::restore() {
  roll_back(accepted_);
}

void ApproximateCrf::roll_back(const std::vector<double>& snapshot) {
  std::copy(snapshot.begin(), snapshot.end(), state().begin());
}

std::pair<int64_t, int64_t> ApproximateCrf::state_range(int64_t n) const {
  if (inference_ == ApproximateInference::MeanField)
    return {data_.state_offset[data_.var_offset[n]], data_.state_offset[data_.var_offset[n + 1]]};
  return loopy_.range(n);
}

void ApproximateCrf::set_theta(std::span<const double> theta) {
  engine_.set_theta(theta, {}, 0.0);
}

void ApproximateCrf::set_example_theta(int64_t n, std::span<const double> theta) {
  engine_.set_example_theta(n, theta, {});
}

void ApproximateCrf::moments(std::span<double> z) const {
  engine_.model().backward(engine_.theta(), belief_, z);
}

void ApproximateCrf::add_example_moments(int64_t n, std::span<const double> weight,
                                         std::span<double> z) const {
  engine_.model().add_backward_example(n, engine_.theta(), weight, z);
}

bool ApproximateCrf::near_found(int64_t n, std::span<const std::vector<double>> found) {
  const auto [first, last] = state_range(n);
  const std::vector<double>& mine = state();
  for (const std::vector<double>& point : found) {
    bool near = true;
    for (int64_t i = first; near && i < last; ++i)
      near = std::abs(mine[i] - point[static_cast<size_t>(i - first)]) <= settle_distance_;
    if (near) {
      std::copy(point.begin(), point.end(), state().begin() + first);
      return true;
    }
  }
  return false;
}

// Sweeps until no message (mean field: belief) moves by more than tol, then, loopy BP only,
// damped sweeps; returns the Bethe objective, which approximates log Z at a fixed point of BP, or
// the mean-field bound.
double ApproximateCrf::infer(int64_t n, Workspace& w, StartRules rules) {
  const bool loopy = inference_ == ApproximateInference::LoopyBp;
  const auto sweep = [&] {
    return loopy ? loopy_.sweep(n, potential_.data(), w)
                 : mean_field_.sweep(n, potential_.data(), belief_.data(), w);
  };
  // A state that settles next to a fixed point found already is heading there (settle_distance_).
  const auto arrived = [&](double change) {
    return change <= tol_ || (change <= settle_distance_ && near_found(n, rules.found));
  };
  bool done = false;
  int sweeps = 0;
  while (!done && sweeps < max_sweeps_) {
    done = arrived(sweep());
    ++sweeps;
  }
  const auto [first, last] = state_range(n);
  std::vector<double>& lambda = loopy_.messages();
  std::vector<double>& before = scratch_[static_cast<size_t>(omp_get_thread_num())];
  const int damped_sweeps = loopy && rules.may_damp ? max_sweeps_ : 0;
  for (int damped = 0; !done && damped < damped_sweeps; ++damped, ++sweeps) {
    // The kernels' messages are linear in the arena's, so damping either is the same.
    before.assign(lambda.begin() + first, lambda.begin() + last);
    loopy_.sweep(n, potential_.data(), w);
    double change = 0.0;
    for (int64_t i = first; i < last; ++i) {
      const double old = before[static_cast<size_t>(i - first)];
      lambda[i] = kDamping * old + (1 - kDamping) * lambda[i];
      change = std::max(change, std::abs(lambda[i] - old));
    }
    done = arrived(change);
  }
  converged_[n] = done;
  sweeps_[n] = sweeps;
  return loopy ? loopy_.beliefs(n, potential_.data(), belief_.data(), w)
               : mean_field_.bound(n, potential_.data(), belief_.data());
}

double ApproximateCrf::infer(int64_t n) {
  return infer(n, workspaces_[0]);
}

InferenceSummary ApproximateCrf::infer_all() {
  const int64_t examples = data_.num_examples();
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t n = 0; n < examples; ++n)
    per_example_[n] = infer(n, workspaces_[static_cast<size_t>(omp_get_thread_num())]);
  require_finite();
  return summary();
}

InferenceSummary ApproximateCrf::summary() const {
  InferenceSummary summary;
  for (int64_t n = 0; n < data_.num_examples(); ++n) {
    summary.log_z += per_example_[n];
    summary.unconverged += converged_[n] ? 0 : 1;
    summary.sweeps += sweeps_[n];
  }
  return summary;
}

void ApproximateCrf::pull_towards(int64_t n, int32_t state, double amount) {
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v) {
    int32_t s = state;
    if (state == kOwnBest) {
      // Read before the pull is added and after it is taken off: the same state both times.
      const double* u = potential_.data() + data_.state_offset[v];
      s = static_cast<int32_t>(std::max_element(u, u + data_.card[v]) - u);
    }
    if (s < data_.card[v]) potential_[data_.state_offset[v] + s] += amount;
  }
}

void ApproximateCrf::start_from_zero(int64_t n) {
  const auto [first, last] = state_range(n);
  if (inference_ == ApproximateInference::LoopyBp)
    std::fill(loopy_.messages().begin() + first, loopy_.messages().begin() + last, 0.0);
  else
    mean_field_.reset(n, belief_.data());
}

double ApproximateCrf::infer_pulled(int64_t n, int32_t state, Workspace& w, StartRules rules) {
  start_from_zero(n);
  pull_towards(n, state, kPull);
  for (int sweep = 0; sweep < kPullSweeps; ++sweep)
    inference_ == ApproximateInference::LoopyBp
        ? loopy_.sweep(n, potential_.data(), w)
        : mean_field_.sweep(n, potential_.data(), belief_.data(), w);
  pull_towards(n, state, -kPull);
  const double log_z = infer(n, w, rules);
  sweeps_[n] += kPullSweeps;
  return log_z;
}

std::array<std::pair<int64_t, int64_t>, 2> ApproximateCrf::potential_ranges(int64_t n) const {
  const int64_t tables = data_.num_states();
  return {{{data_.state_offset[data_.var_offset[n]], data_.state_offset[data_.var_offset[n + 1]]},
           {tables + data_.table_offset[data_.factor_offset[n]],
            tables + data_.table_offset[data_.factor_offset[n + 1]]}}};
}

double ApproximateCrf::infer_annealed(int64_t n, Workspace& w, StartRules rules) {
  start_from_zero(n);
  // Potentials are linear in theta: scaling the example's potentials scales its theta.
  const auto ranges = potential_ranges(n);
  std::array<std::vector<double>, 2> full;
  for (size_t r = 0; r < 2; ++r)
    full[r].assign(potential_.begin() + ranges[r].first, potential_.begin() + ranges[r].second);
  int sweeps = 0;
  for (int k = 1; k < kAnnealSteps; ++k) {
    const double scale = static_cast<double>(k) / kAnnealSteps;
    for (size_t r = 0; r < 2; ++r)
      for (int64_t i = ranges[r].first; i < ranges[r].second; ++i)
        potential_[i] = scale * full[r][static_cast<size_t>(i - ranges[r].first)];
    // The fixed points found are the full potentials': no stage but the last settles onto them.
    infer(n, w, {{}, rules.may_damp});
    sweeps += sweeps_[n];
  }
  for (size_t r = 0; r < 2; ++r)
    std::copy(full[r].begin(), full[r].end(), potential_.begin() + ranges[r].first);
  const double log_z = infer(n, w, rules);
  sweeps_[n] += sweeps;
  return log_z;
}

int ApproximateCrf::own_best_start() const {
  return 1 + (data_.card.empty() ? 0 : *std::max_element(data_.card.begin(), data_.card.end()));
}

double ApproximateCrf::infer_from_start(int64_t n, int start, Workspace& w, StartRules rules) {
  if (start == annealed_start()) return infer_annealed(n, w, rules);
  if (start == zero_start()) {
    start_from_zero(n);
    return infer(n, w, rules);
  }
  return infer_pulled(n, start == own_best_start() ? kOwnBest : start - 1, w, rules);
}

namespace {

// Whether a fixed point of `log_z` (`converged` or not) beats the best so far: a converged one
// beats an unconverged one; among equals a clearly larger log Z wins. Starts that reach the
// same fixed point differ by their tolerance and round-off only: the earlier start keeps it,
// whatever the rank and thread count.
bool beats(double log_z, char converged, double best, char best_converged) {
  if (best == -INFINITY) return true;  // nothing found yet (the margin below would be NaN)
  const bool clearly_larger = log_z > best + kSameFixedPoint * (1 + std::abs(best));
  return (converged && !best_converged) || (converged == best_converged && clearly_larger);
}

}  // namespace

int ApproximateCrf::keep_best_start(int64_t n, int incumbent, bool incumbent_is_cold,
                                    std::span<const int> starts, Workspace& w, int64_t& sweeps) {
  const auto [begin, end] = state_range(n);
  std::vector<double>& mine = state();
  // The converged fixed points of prediction's starts so far, each once: a start that settles
  // next to one is moved onto it (set_settle_distance). Not a warm state's, which prediction lacks.
  std::vector<std::vector<double>> found;
  const auto remember = [&] {
    if (converged_[n] && !near_found(n, found))
      found.emplace_back(mine.begin() + begin, mine.begin() + end);
  };
  double best = infer(n, w);
  sweeps += sweeps_[n];
  if (incumbent_is_cold) remember();
  std::vector<double> best_state(mine.begin() + begin, mine.begin() + end);
  char best_converged = converged_[n];
  int chosen = incumbent;
  double& cold = cold_log_z_[static_cast<size_t>(n)];
  char& cold_converged = cold_converged_[static_cast<size_t>(n)];
  if (incumbent_is_cold) std::tie(cold, cold_converged) = std::tuple(best, best_converged);
  for (const int start : starts) {
    // Damped sweeps rescue an example none of whose starts has converged yet. Once one of
    // prediction's starts has, a later start that does not converge undamped is dropped
    // (unconverged, it cannot win: beats). Damping might still converge it, but where it did on
    // the denoising sets of issue 42 it found the fixed point already in hand, at the cost of all
    // the other starts together. Only prediction's starts count, in prediction's order, so that
    // training and prediction damp the same starts.
    const double log_z = infer_from_start(n, start, w, {found, !cold_converged});
    sweeps += sweeps_[n];
    remember();
    if (beats(log_z, converged_[n], cold, cold_converged))
      std::tie(cold, cold_converged) = std::tuple(log_z, converged_[n]);
    if (beats(log_z, converged_[n], best, best_converged)) {
      best = log_z;
      best_converged = converged_[n];
      best_state.assign(mine.begin() + begin, mine.begin() + end);
      chosen = start;
    }
  }
  std::copy(best_state.begin(), best_state.end(), mine.begin() + begin);
  per_example_[n] = infer(n, w);  // from the chosen fixed point: its beliefs, in place
  sweeps += sweeps_[n];
  return chosen;
}

InferenceSummary ApproximateCrf::infer_all_best_start(std::vector<int>& chosen_start, bool anneal,
                                                      CurrentState current, StartSet set) {
  const int64_t examples = data_.num_examples();
  chosen_start.assign(static_cast<size_t>(examples), 0);
  // 1 .. own_best_start() - 1 are pulled towards each state.
  const bool all = set == StartSet::All;
  std::vector<int> starts(static_cast<size_t>(own_best_start() - (all ? 0 : 1)));
  std::iota(starts.begin(), starts.end(), 1);
  // Zero messages first, where prediction's current state has them.
  if (all && current == CurrentState::Warm) starts.insert(starts.begin(), zero_start());
  if (all && anneal) starts.push_back(annealed_start());
  // A warm state is no start of prediction's: the cold best starts below any fixed point.
  std::fill(cold_log_z_.begin(), cold_log_z_.end(), -INFINITY);
  std::fill(cold_converged_.begin(), cold_converged_.end(), 0);
  int64_t sweeps = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sweeps)
  for (int64_t n = 0; n < examples; ++n)
    chosen_start[static_cast<size_t>(n)] =
        keep_best_start(n, 0, current == CurrentState::Cold, starts,
                        workspaces_[static_cast<size_t>(omp_get_thread_num())], sweeps);
  require_finite();
  InferenceSummary totals = summary();
  totals.sweeps = sweeps;
  return totals;
}

InferenceSummary ApproximateCrf::anneal_where(std::span<const char> wanted,
                                              std::vector<int>& chosen_start) {
  const int64_t examples = data_.num_examples();
  const int annealed[1] = {annealed_start()};
  int64_t sweeps = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sweeps)
  for (int64_t n = 0; n < examples; ++n)
    if (wanted[static_cast<size_t>(n)])
      chosen_start[static_cast<size_t>(n)] =
          keep_best_start(n, chosen_start[static_cast<size_t>(n)], false, annealed,
                          workspaces_[static_cast<size_t>(omp_get_thread_num())], sweeps);
  require_finite();
  InferenceSummary totals = summary();
  totals.sweeps = sweeps;
  return totals;
}

std::vector<double> ApproximateCrf::truth_scores() const {
  // Kept by the engine: every evaluation of the likelihood asks for the scores.
  const std::span<const double> truth = engine_.truth_weight();
  std::vector<double> scores(static_cast<size_t>(data_.num_examples()), 0.0);
  for (int64_t n = 0; n < data_.num_examples(); ++n) {
    double score = 0.0;
    for (const auto& [begin, end] : potential_ranges(n))
      for (int64_t i = begin; i < end; ++i) score += truth[i] * potential_[i];
    scores[static_cast<size_t>(n)] = score;
  }
  return scores;
}

// Inference to convergence costs far more than these scans.
void ApproximateCrf::require_finite() const {
  const bool finite =
      all_finite(engine_.potential_array()) && all_finite(loopy_.messages()) && all_finite(belief_);
  run_collectively(data_.communicator(), [&] {
    if (!finite) throw InputError(data_.source() + ": " + explain_non_finite());
  });
}

std::string ApproximateCrf::explain_non_finite() const {
  const PotentialSource u{data_, engine_.theta(), {}, engine_.potential_array()};
  const int64_t potential = first_non_finite(engine_.potential_array());
  if (potential >= 0) return describe_potential(u, potential);
  const std::string cause = describe_largest_potential(u, 1.0);
  const std::vector<double> lambda = loopy_.arena();
  const int64_t message = first_non_finite(lambda);
  if (message >= 0) return describe_message(data_, graph_, lambda, message) + ": " + cause;
  return describe_belief(data_, belief_, first_non_finite(belief_)) + ": " + cause;
}

void ApproximateCrf::ground_truth_moments(std::span<double> d) const {
  engine_.ground_truth_moments(d);
}

}  // namespace pdsp
