#include "pdsp/learners/primal_dual/kronecker_curvature.hpp"

// GCC 12 reports Eigen's AVX-512 products as reading an uninitialised register inside its own
// intrinsics (-Wmaybe-uninitialized; the register is written by the intrinsic itself); it
// is silenced for this file, which holds all of pdsp's Eigen code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "pdsp/optim/conjugate_gradient.hpp"

namespace pdsp {
namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Matrix = Eigen::Map<const Eigen::MatrixXd>;

// Above this observation dimension the Gram matrix is kept as its diagonal: a dense dim x dim
// matrix and its eigenvectors would cost more than they save (sparse text features).
constexpr int32_t kDenseFeatureLimit = 2048;
// P's smallest curvature, relative to its largest, so that P stays positive definite where
// neither the data nor the regulariser curve F (the sum of a variable's state parameters, to
// which the soft-max is blind, at p = 1).
constexpr double kCurvatureFloor = 1e-12;
// Conjugate-gradient steps per solve of the soft-max kind. OCR at eps = 1 (iterations to
// F* (1 + 1e-6), with L-BFGS's gamma rescaling): 1 step 68 (the Kronecker model's count),
// 2 steps 48, 3 steps 48, 5 steps 41; each step costs one product with the soft-max curvature
// (two passes over the observations).
constexpr int kSoftmaxCgSteps = 2;

// Eigen-decomposes a symmetric matrix, eigenvalues clipped at 0 (round-off of a PSD sum).
void decompose(const Eigen::MatrixXd& m, std::vector<double>& vectors,
               std::vector<double>& values) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m);
  const Eigen::VectorXd clipped = solver.eigenvalues().cwiseMax(0.0);
  vectors.assign(solver.eigenvectors().data(), solver.eigenvectors().data() + m.size());
  values.assign(clipped.data(), clipped.data() + clipped.size());
}

}  // namespace

KroneckerCurvature::KroneckerCurvature(const LocalProblem& problem, Communicator& comm,
                                       const Regularizer& reg, Kind kind)
    : problem_(problem), comm_(comm), regularizer_(reg) {
  // Blocks whose Gram matrix would be kept as its diagonal model F poorly: on UMass citations
  // (38 states, 16,385 hashed features) the Kronecker model took 456 iterations to a worse F than
  // gamma I's 359, the soft-max curvature 500 (docs/benchmarks.md). The automatic kind leaves
  // such blocks out, and with them every data set whose blocks are all sparse.
  find_blocks(kind == Kind::Automatic ? kDenseFeatureLimit : std::numeric_limits<int32_t>::max());
  build_feature_factors();
  const bool many_states =
      std::any_of(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.states > 2; });
  if (kind == Kind::Softmax || (kind == Kind::Automatic && many_states)) {
    std::vector<TypedBlock> layout;
    for (const Block& b : blocks_) layout.push_back({b.type, b.offset, b.states, b.dim});
    softmax_.emplace(problem_, comm_, std::move(layout));
  }
}

// The typed variable blocks of at most `max_dim` features whose variables all have one
// cardinality on every rank and whose parameter ranges do not overlap another block's.
void KroneckerCurvature::find_blocks(int32_t max_dim) {
  const Dataset& data = problem_.data();
  const RegionTypes& types = data.var_types;
  const int64_t params = problem_.num_params();
  in_block_.assign(static_cast<size_t>(params), 0);
  // Types are the file's, the same on every rank, even one without variables.
  const int64_t count = types.present ? types.num_types() : 0;
  // Per type: variables, largest card, largest -card (so min card), over all ranks.
  std::vector<double> sums(static_cast<size_t>(count), 0.0),
      maxima(static_cast<size_t>(2 * count), -std::numeric_limits<double>::infinity());
  for (int64_t v = 0; count > 0 && v < data.owned_vars(); ++v) {
    const int32_t k = types.type[v];
    if (k < 0) continue;
    sums[k] += 1;
    maxima[2 * k] = std::max(maxima[2 * k], double(data.card[v]));
    maxima[2 * k + 1] = std::max(maxima[2 * k + 1], -double(data.card[v]));
  }
  comm_.allreduce(sums, maxima);
  for (int64_t k = 0; k < count; ++k) {
    const int32_t dim = types.dim[k];
    if (dim <= 0 || dim > max_dim || sums[k] == 0 || maxima[2 * k] != -maxima[2 * k + 1]) continue;
    Block b;
    b.type = static_cast<int32_t>(k);
    b.offset = types.param_offset[k];
    b.states = static_cast<int32_t>(maxima[2 * k]);
    b.dim = dim;
    b.variables = sums[k];
    const int64_t end = b.offset + int64_t{b.states} * dim;
    if (b.offset < 0 || end > params ||
        std::any_of(in_block_.begin() + b.offset, in_block_.begin() + end,
                    [](uint8_t covered) { return covered != 0; }))
      continue;
    std::fill(in_block_.begin() + b.offset, in_block_.begin() + end, 1);
    blocks_.push_back(std::move(b));
  }
  diagonal_.assign(static_cast<size_t>(params), 0.0);
  block_regulariser_.assign(blocks_.size(), 0.0);
}

// sum_v x_v x_v' of each block (its diagonal above kDenseFeatureLimit), over all ranks; fixed
// for the whole run, so decomposed once.
void KroneckerCurvature::build_feature_factors() {
  const Dataset& data = problem_.data();
  const RegionTypes& types = data.var_types;
  const ObservationRows& rows = data.observations;
  for (Block& b : blocks_) {
    const bool dense = b.dim <= kDenseFeatureLimit;
    Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(dense ? b.dim : 0, dense ? b.dim : 0);
    Eigen::VectorXd diagonal = Eigen::VectorXd::Zero(b.dim);
    for (int64_t v = 0; v < data.owned_vars(); ++v) {
      if (types.type[v] != b.type || types.obs_row.empty() || types.obs_row[v] < 0) continue;
      const int64_t row = types.obs_row[v];
      for (int64_t e = rows.ptr[row]; e < rows.ptr[row + 1]; ++e) {
        const double x = rows.value_at(e);
        diagonal[rows.index[e]] += x * x;
        if (!dense) continue;
        for (int64_t f = rows.ptr[row]; f < e; ++f)  // the lower triangle, which the solver reads
          gram(std::max(rows.index[e], rows.index[f]), std::min(rows.index[e], rows.index[f])) +=
              x * rows.value_at(f);
      }
    }
    if (dense) {
      gram.diagonal() = diagonal;
      comm_.allreduce_sum(std::span<double>(gram.data(), static_cast<size_t>(gram.size())));
      decompose(gram, b.feature_vectors, b.feature_values);
    } else {
      comm_.allreduce_sum(std::span<double>(diagonal.data(), static_cast<size_t>(b.dim)));
      b.feature_values.assign(diagonal.data(), diagonal.data() + b.dim);
    }
  }
}

double KroneckerCurvature::regulariser_curvature(double theta) const {
  const double p = regularizer_.p;
  if (p == 2.0) return regularizer_.C;
  if (p <= 1.0) return 0.0;
  // |theta|^(p-2) has no finite value at 0 for p < 2: bounded to a range around C.
  const double c = regularizer_.C * (p - 1.0) * std::pow(std::abs(theta), p - 2.0);
  return std::clamp(c, 1e-6 * regularizer_.C, 1e6 * regularizer_.C);
}

void KroneckerCurvature::refresh(std::span<const double> theta, std::span<const double> moments) {
  const Dataset& data = problem_.data();
  const std::span<const double> belief = problem_.beliefs();
  const double tau = std::max(problem_.temperature(), std::numeric_limits<double>::min());
  // The state covariances of every block in one reduction.
  size_t total = 0;
  for (const Block& b : blocks_) total += static_cast<size_t>(b.states) * b.states;
  std::vector<double> covariance(total, 0.0);
  size_t at = 0;
  for (const Block& b : blocks_) {
    Eigen::Map<Eigen::MatrixXd> c(covariance.data() + at, b.states, b.states);
    for (int64_t v = 0; v < data.owned_vars(); ++v) {
      if (data.var_types.type[v] != b.type) continue;
      const Eigen::Map<const Eigen::VectorXd> p(belief.data() + data.state_offset[v], b.states);
      c.diagonal() += p;
      c.noalias() -= p * p.transpose();
    }
    at += static_cast<size_t>(b.states) * b.states;
  }
  comm_.allreduce_sum(covariance);

  double largest = 0;
  for (size_t r = 0; r < diagonal_.size(); ++r) {
    if (in_block_[r]) continue;
    diagonal_[r] = std::abs(moments[r]) / tau + regulariser_curvature(theta[r]);
    largest = std::max(largest, diagonal_[r]);
  }
  at = 0;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block& b = blocks_[i];
    const Eigen::Map<const Eigen::MatrixXd> c(covariance.data() + at, b.states, b.states);
    decompose(c / (b.variables * tau), b.state_vectors, b.state_values);
    at += static_cast<size_t>(b.states) * b.states;
    double sum = 0;
    for (int64_t r = b.offset; r < b.offset + int64_t{b.states} * b.dim; ++r)
      sum += regulariser_curvature(theta[r]);
    block_regulariser_[i] = sum / (double(b.states) * b.dim);
    largest = std::max(largest,
                       *std::max_element(b.state_values.begin(), b.state_values.end()) *
                               *std::max_element(b.feature_values.begin(), b.feature_values.end()) +
                           block_regulariser_[i]);
  }
  // The floor, from the largest curvature, keeps P positive definite.
  const double floor = kCurvatureFloor * std::max(largest, std::numeric_limits<double>::min());
  for (double& d : diagonal_) d = std::max(d, floor);
  for (double& r : block_regulariser_) r = std::max(r, floor);
}

void KroneckerCurvature::solve(std::span<const double> in, std::span<double> out) const {
  if (!softmax_) {
    solve_kronecker(in, out);
    return;
  }
  conjugate_gradient(
      kSoftmaxCgSteps, [this](std::span<const double> x, std::span<double> px) { multiply(x, px); },
      [this](std::span<const double> r, std::span<double> z) { solve_kronecker(r, z); }, in, out);
}

void KroneckerCurvature::multiply(std::span<const double> in, std::span<double> out) const {
  for (size_t r = 0; r < diagonal_.size(); ++r)
    if (!in_block_[r]) out[r] = diagonal_[r] * in[r];
  softmax_->multiply(in, out);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    for (int64_t r = b.offset; r < b.offset + int64_t{b.states} * b.dim; ++r)
      out[r] += block_regulariser_[i] * in[r];
  }
}

void KroneckerCurvature::solve_kronecker(std::span<const double> in, std::span<double> out) const {
  for (size_t r = 0; r < diagonal_.size(); ++r)
    if (!in_block_[r]) out[r] = in[r] / diagonal_[r];
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    const Eigen::Map<const RowMajor> theta(in.data() + b.offset, b.states, b.dim);
    Eigen::Map<RowMajor> result(out.data() + b.offset, b.states, b.dim);
    const Matrix states(b.state_vectors.data(), b.states, b.states);
    const bool dense = !b.feature_vectors.empty();
    const Matrix features(b.feature_vectors.data(), dense ? b.dim : 0, dense ? b.dim : 0);
    // In the eigenbases P is diagonal: c_t g_j + lambda.
    RowMajor rotated = states.transpose() * theta;
    if (dense) rotated = rotated * features;
    for (int32_t t = 0; t < b.states; ++t)
      for (int32_t j = 0; j < b.dim; ++j)
        rotated(t, j) /= b.state_values[t] * b.feature_values[j] + block_regulariser_[i];
    if (dense) rotated = rotated * features.transpose();
    result.noalias() = states * rotated;
  }
}

}  // namespace pdsp
