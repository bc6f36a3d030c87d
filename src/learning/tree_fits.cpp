#include "pdsp/learning/tree_fits.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/features/potential_model.hpp"

namespace pdsp {
namespace {

// One region's beliefs and truths at one output, as a leaf's fit reads them: the row's block of
// the gathered array is [beliefs (outputs) | truths (outputs) | tau | size].
struct RowTerms {
  const double* data;
  int outputs;
  double belief(int k) const { return data[k]; }
  double truth(int k) const { return data[outputs + k]; }
  double tau() const { return data[2 * outputs]; }  // c_r times the temperature
  int size() const { return static_cast<int>(data[2 * outputs + 1]); }
};

// F along one leaf's potentials at output k, relative to delta = 0: the sum over its rows of
// tau log(1 - b + b e^(delta / tau)) - y delta (the region's smax term with one potential moved),
// plus C delta^2 / 2; with its first two derivatives. A row whose tau is not positive (a max,
// not a smax) adds its gradient at 0 as a linear term.
double leaf_objective(const std::vector<RowTerms>& rows, int k, double delta, double C,
                      double& grad, double& hess) {
  double value = 0.5 * C * delta * delta;
  grad = C * delta;
  hess = C;
  for (const RowTerms& row : rows) {
    const double b = row.belief(k), y = row.truth(k), tau = row.tau();
    if (tau <= 0) {
      value += (b - y) * delta;
      grad += b - y;
      continue;
    }
    const double z = delta / tau;
    double moved, log_sum;  // b at delta, and log(1 - b + b e^z), both without overflow
    if (z > 0) {
      const double rest = (1.0 - b) * std::exp(-z);
      moved = b / (b + rest);
      log_sum = z + std::log(b + rest);
    } else {
      const double grown = b * std::exp(z);
      moved = grown / (1.0 - b + grown);
      log_sum = std::log1p(b * std::expm1(z));
    }
    value += tau * log_sum - y * delta;
    grad += moved - y;
    hess += moved * (1.0 - moved) / tau;
  }
  return value;
}

// The minimiser of leaf_objective by Newton steps with backtracking (it is convex).
double fit_leaf(const std::vector<RowTerms>& rows, int k, double C) {
  double delta = 0.0, grad = 0.0, hess = 0.0;
  double value = leaf_objective(rows, k, delta, C, grad, hess);
  for (int iteration = 0; iteration < 100 && hess > 0; ++iteration) {
    const double step = -grad / hess;
    double t = 1.0, trial_grad = 0.0, trial_hess = 0.0;
    double trial = leaf_objective(rows, k, delta + step, C, trial_grad, trial_hess);
    while (trial > value + 1e-4 * t * step * grad && t > 1e-12) {
      t *= 0.5;
      trial = leaf_objective(rows, k, delta + t * step, C, trial_grad, trial_hess);
    }
    if (t <= 1e-12) break;
    delta += t * step;
    const bool done = std::abs(t * step) <= 1e-12 * (1.0 + std::abs(delta));
    value = trial;
    grad = trial_grad;
    hess = trial_hess;
    if (done) break;
  }
  return delta;
}

// One Newton step of leaf_objective from 0, its curvature taken with |tau|: at a negative
// counting number the region's term is concave along the potential, and the step must still
// point down F, the step search deciding how far.
double newton_leaf(const std::vector<RowTerms>& rows, int k, double C) {
  double grad = 0.0, curvature = C;
  for (const RowTerms& row : rows) {
    const double b = row.belief(k);
    grad += b - row.truth(k);
    if (row.tau() != 0) curvature += b * (1.0 - b) / std::abs(row.tau());
  }
  return curvature > 0 ? -grad / curvature : 0.0;
}

}  // namespace

struct TreeFits::Gathered {
  int64_t rows = 0;              // of every rank
  std::vector<int64_t> own_row;  // [the ensemble's rows here] its row among all, -1: not owned
  std::unique_ptr<TreeRows> matrix;
  std::vector<double> margin;  // scratch: the last round's trees at every row
};

TreeFits::~TreeFits() = default;

TreeFits::TreeFits(const LocalProblem& problem, TreeFunctions& trees, Communicator& comm)
    : trees_(trees), comm_(comm) {
  const Dataset& data = problem.data();
  for (TreeFunctions::Ensemble& ens : trees.ensembles()) {
    auto gathered = std::make_unique<Gathered>();
    const auto local_rows = static_cast<int64_t>(ens.regions.size());
    // Each owned region's place in the file, and the extent of the kind's file positions.
    std::vector<int64_t> file_index(static_cast<size_t>(local_rows), -1);
    double extent[1] = {0.0};
    for (int64_t r = 0; r < local_rows; ++r) {
      const TreeFunctions::Region& region = trees.regions()[ens.regions[r]];
      const bool factor = region.factor >= 0;
      if (region.local >= (factor ? data.owned_factors() : data.owned_vars())) continue;
      file_index[r] = factor ? data.file_factor(region.local) : data.file_var(region.local);
      extent[0] = std::max(extent[0], static_cast<double>(file_index[r] + 1));
    }
    comm.allreduce({}, extent);
    std::vector<double> marked(static_cast<size_t>(extent[0]), 0.0);
    for (int64_t index : file_index)
      if (index >= 0) marked[index] = 1.0;
    comm.allreduce_sum(marked);
    // The rows of all ranks in the file's order: the same order on any rank count.
    std::vector<int64_t> row_of_index(marked.size(), -1);
    for (size_t i = 0; i < marked.size(); ++i)
      if (marked[i] > 0) row_of_index[i] = gathered->rows++;
    gathered->own_row.assign(static_cast<size_t>(local_rows), -1);
    std::vector<double> features(static_cast<size_t>(gathered->rows * ens.dim), 0.0);
    for (int64_t r = 0; r < local_rows; ++r) {
      if (file_index[r] < 0) continue;
      const int64_t row = gathered->own_row[r] = row_of_index[file_index[r]];
      for (int j = 0; j < ens.dim; ++j) features[row * ens.dim + j] = ens.features[r * ens.dim + j];
    }
    comm.allreduce_sum(features);
    const std::vector<float> values(features.begin(), features.end());
    gathered->matrix = std::make_unique<TreeRows>(values, gathered->rows, ens.dim);
    gathered->margin.assign(static_cast<size_t>(gathered->rows * ens.trees->outputs()), 0.0);
    gathered_.push_back(std::move(gathered));
  }
}

void TreeFits::boost(LocalProblem& problem, std::span<const double> theta, uint8_t kind, int rounds,
                     double C) {
  for (int round_number = 0; round_number < rounds; ++round_number) {
    problem.set_theta(theta);
    problem.evaluate();  // the beliefs at the current messages and trees
    for (size_t e = 0; e < gathered_.size(); ++e) {
      if (trees_.ensembles()[e].kind != kind) continue;
      round(problem, e, C, LeafRule::Minimise);
      TreeFunctions::Ensemble& ens = trees_.ensembles()[e];
      const std::vector<double> added = last_round_at_rows(e);
      for (size_t i = 0; i < ens.margin.size(); ++i) ens.margin[i] += added[i];
    }
  }
  problem.set_theta(theta);
}

double TreeFits::add_step_round(const LocalProblem& problem, double C) {
  const size_t count = gathered_.size();
  step_base_.resize(count);
  step_trees_.resize(count);
  double slope = 0.0;
  for (size_t e = 0; e < count; ++e) {
    TreeFunctions::Ensemble& ens = trees_.ensembles()[e];
    slope += round(problem, e, C, LeafRule::NewtonStep);
    step_base_[e] = ens.margin;
    step_trees_[e] = last_round_at_rows(e);
    for (size_t i = 0; i < ens.margin.size(); ++i) ens.margin[i] += step_trees_[e][i];
  }
  return slope;
}

std::vector<double> TreeFits::last_round_at_rows(size_t e) const {
  const TreeFunctions::Ensemble& ens = trees_.ensembles()[e];
  const Gathered& gathered = *gathered_[e];
  std::vector<double> values(ens.margin.size(), 0.0);
  // A shard's copied factors are not among the gathered rows: only they need a look-up.
  if (std::find(gathered.own_row.begin(), gathered.own_row.end(), -1) != gathered.own_row.end()) {
    ens.trees->add_margins(*ens.rows, ens.trees->rounds() - 1, values);
    return values;
  }
  const int outputs = ens.trees->outputs();
  for (size_t r = 0; r < gathered.own_row.size(); ++r)
    std::copy_n(gathered.margin.begin() + gathered.own_row[r] * outputs, outputs,
                values.begin() + static_cast<int64_t>(r) * outputs);
  return values;
}

void TreeFits::scale_step(double factor) {
  for (size_t e = 0; e < step_trees_.size(); ++e) {
    TreeFunctions::Ensemble& ens = trees_.ensembles()[e];
    ens.trees->scale_last_round(factor);
    // The same products as the leaf values', added to the same sums: a reload's margins.
    for (size_t i = 0; i < ens.margin.size(); ++i)
      ens.margin[i] = step_base_[e][i] + (step_trees_[e][i] *= factor);
  }
}

double TreeFits::round(const LocalProblem& problem, size_t e, double C, LeafRule rule) {
  TreeFunctions::Ensemble& ens = trees_.ensembles()[e];
  Gathered& gathered = *gathered_[e];
  const int outputs = ens.trees->outputs();
  const int64_t width = 2 * outputs + 2;
  const std::span<const double> belief = problem.beliefs();
  const std::span<const double> truth = problem.ground_truth_indicator();
  const CountingNumbers& counting = problem.counting();
  std::vector<double> packed(static_cast<size_t>(gathered.rows * width), 0.0);
  for (size_t r = 0; r < gathered.own_row.size(); ++r) {
    if (gathered.own_row[r] < 0) continue;
    const TreeFunctions::Region& region = trees_.regions()[ens.regions[r]];
    double* row = packed.data() + gathered.own_row[r] * width;
    for (int32_t t = 0; t < region.size; ++t) {
      row[t] = belief[region.position + t];
      row[outputs + t] = truth[region.position + t];
    }
    const double c =
        region.factor >= 0 ? counting.factor[region.local] : counting.var[region.local];
    row[2 * outputs] = c * problem.temperature();
    row[2 * outputs + 1] = region.size;
  }
  comm_.allreduce_sum(packed);

  std::vector<float> gradient(static_cast<size_t>(gathered.rows * outputs), 0.0f);
  std::vector<float> weight(gradient.size(), 0.0f);
  for (int64_t g = 0; g < gathered.rows; ++g) {
    const RowTerms row{packed.data() + g * width, outputs};
    for (int k = 0; k < row.size(); ++k) {
      gradient[g * outputs + k] = static_cast<float>(row.belief(k) - row.truth(k));
      weight[g * outputs + k] = 1.0f;
    }
  }
  const LeafFit fit = [&](int k, std::span<const int64_t> rows) {
    std::vector<RowTerms> members;
    for (int64_t g : rows) {
      const RowTerms row{packed.data() + g * width, outputs};
      if (k < row.size()) members.push_back(row);
    }
    if (members.empty()) return 0.0;
    return rule == LeafRule::Minimise ? fit_leaf(members, k, C) : newton_leaf(members, k, C);
  };
  std::fill(gathered.margin.begin(), gathered.margin.end(), 0.0);
  ens.trees->add_round(*gathered.matrix, gradient, weight, fit, gathered.margin);
  // Every rank holds all rows: the derivative is the same everywhere without a reduction.
  double slope = 0.0;
  for (int64_t g = 0; g < gathered.rows; ++g) {
    const RowTerms row{packed.data() + g * width, outputs};
    for (int k = 0; k < row.size(); ++k)
      slope += (row.belief(k) - row.truth(k)) * gathered.margin[g * outputs + k];
  }
  return slope;
}

}  // namespace pdsp
