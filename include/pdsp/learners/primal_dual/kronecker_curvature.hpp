#pragma once
// A model P of F's curvature in theta: the H_0 = P^{-1} of the quasi-Newton step (LbfgsMemory),
// so that L-BFGS starts from the shape of F rather than from a multiple of the identity.
//
// A typed variable block of format 2 (dim > 0: u_v(t) = sum_j theta[offset + t dim + j] x_vj)
// holds most parameters of a label-conditioned model (OCR: 3,354 of 4,030). Its block of F's
// Hessian is about sum_v Cov(b_v) (x) x_v x_v' / tau (the soft-max of each variable at
// temperature tau; correlations between variables left out), which is taken as the Kronecker
// product (sum_v Cov(b_v)) (x) (sum_v x_v x_v') / (N tau) of its N variables (the
// factorisation of Martens & Grosse's K-FAC). Its inverse then needs only the eigenvectors of a
// states x states and a dim x dim matrix. Every other parameter gets the diagonal |m_i| / tau
// from the model moments m (an indicator feature's variance is at most its mean). The
// regulariser's curvature C (p - 1) is added to all.
//
// With the soft-max kind the typed blocks of P are instead the soft-max curvature itself
// (SoftmaxCurvature, which keeps the correlations between states and features that the Kronecker
// product averages out), and solve runs a few conjugate-gradient steps on it with the Kronecker
// model as preconditioner (`--lbfgs-curvature softmax`). The automatic kind picks it when a block
// has more than two states: with two, every Cov(b_v) is a multiple of one fixed 2 x 2 matrix, and
// the soft-max curvature differs from the Kronecker product only in weighting the Gram matrix
// by p (1 - p) (yeast: 72 iterations against 76, at 4.8 times the time). It also leaves out
// blocks of more than 2,048 features, whose Gram matrix is kept as its diagonal (hashed text
// features: the model slowed UMass citations down).
//
// Measured at eps = 1 (docs/benchmarks.md): OCR stops after 74 iterations instead of 145, the
// OCR chain CRF reaches its optimum in 101 instead of 195, yeast (C = 0.1) in 102 instead of 200.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "pdsp/learners/primal_dual/softmax_curvature.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/optim/regularizer.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

class KroneckerCurvature {
 public:
  enum class Kind { Automatic, Softmax, Kronecker };

  // Collective: the Gram matrix of each typed block's observations over all ranks, once.
  KroneckerCurvature(const LocalProblem& problem, Communicator& comm, const Regularizer& reg,
                     Kind kind = Kind::Kronecker);

  // Collective: the state covariances from the beliefs of the last evaluation, and the diagonal
  // from the model moments summed over the ranks (`moments`, the same on every rank).
  void refresh(std::span<const double> theta, std::span<const double> moments);
  // out = P^{-1} in (in and out may not alias); collective for the soft-max kind.
  void solve(std::span<const double> in, std::span<double> out) const;

  // Whether any parameter has the Kronecker model (otherwise P is diagonal).
  bool has_blocks() const { return !blocks_.empty(); }
  // Whether P is F's curvature on the blocks (the soft-max kind) rather than a model of its
  // shape only, which L-BFGS rescales to the newest curvature pair.
  bool is_softmax() const { return softmax_.has_value(); }

 private:
  // One typed variable block: parameters [offset, offset + states * dim), row-major by state.
  struct Block {
    int32_t type = 0;
    int64_t offset = 0;
    int32_t states = 0, dim = 0;
    double variables = 0;  // N over all ranks
    // Eigenvectors (column-major, square; feature_vectors empty when the Gram matrix is kept as
    // its diagonal) and eigenvalues of the Gram matrix and of the mean state covariance / tau.
    std::vector<double> feature_vectors, feature_values, state_vectors, state_values;
  };

  void find_blocks(int32_t max_dim);
  void build_feature_factors();
  // Collective, soft-max kind only: out = P in.
  void multiply(std::span<const double> in, std::span<double> out) const;
  // out = the Kronecker model's inverse applied to in.
  void solve_kronecker(std::span<const double> in, std::span<double> out) const;
  double regulariser_curvature(double theta) const;

  const LocalProblem& problem_;
  Communicator& comm_;
  Regularizer regularizer_;
  std::vector<Block> blocks_;
  std::vector<uint8_t> in_block_;            // [params] covered by a block
  std::vector<double> diagonal_;             // [params] P's diagonal outside the blocks
  std::vector<double> block_regulariser_;    // [blocks] the regulariser's curvature there
  std::optional<SoftmaxCurvature> softmax_;  // the blocks' curvature (the soft-max kind)
};

}  // namespace pdsp
