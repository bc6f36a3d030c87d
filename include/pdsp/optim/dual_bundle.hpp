#pragma once
// The dual side of the eps = 0 certificate (docs/eps_zero.md). Every consistent belief b (a point
// of the local polytope) and every mixture of such beliefs gives a lower bound of the optimum,
//
//   D_0(omega) = sum_k omega_k loss_k - conj(sum_k omega_k z_k - d),
//
// with loss_k and z_k the expected loss and moments of the k-th kept belief and omega on the
// simplex: at small temperatures the beliefs jump between the sides of the kinks of the eps = 0
// problem, and its optimum ties several of them. The bundle keeps up to dual_bundle_capacity
// points and the best mixture omega, and maximises D_0 over omega again after each new point.
// With the p = 2 regulariser conj(w) = |w|^2 / (2C) and D_0 is a quadratic in omega through the
// Gram matrix of the g_k = z_k - d, maximised by pairwise steps (SMO's working-set rule) to
// round-off; other p take projected gradient steps. When the bundle is full, the oldest point
// without weight leaves it, or, when all carry weight, the two lightest become their mixture (a
// point of the local polytope too): the best mixture stays in the bundle, so the bound never
// falls. This is the dual of the cutting-plane model of the structured SVM (1-slack, BMRM) over
// the beliefs the training has met, used here for the bound only; theta still moves by the
// smoothed steps of the trainer.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/optim/regularizer.hpp"

namespace pdsp {

// On yeast (3,276 parameters) 64 points certified a gap of 1.4% of F after 400 iterations where
// the 16 most recent beliefs, without aggregation, certified 2.5% (docs/benchmarks.md).
inline constexpr int kMaxDualPoints = 64;
// The points a model of `params` parameters keeps: kMaxDualPoints, fewer where their moments
// would take more than 128 MiB (citations' 624,074 parameters: 26), never fewer than 2 (the
// aggregate and the newest point, the least that still raises the bound).
int dual_bundle_capacity(int64_t params);

// Plain values, so that checkpoints store them; the Gram matrix is a cache, rebuilt after a
// resume from the same values and so bitwise the same.
struct DualBundle {
  std::vector<double> moments;  // z_k, blocks of `params` values, oldest first
  std::vector<double> losses;   // loss_k
  std::vector<double> weights;  // omega, the best mixture found (sums to 1)
  double best = -INFINITY;      // the best D_0 found

  // Adds the point (z, loss), keeping at most `capacity` points (dual_bundle_capacity), maximises
  // D_0 over the mixtures from the last best one and returns the best D_0 (any omega gives a valid
  // bound, so stopping early only weakens it).
  double add(std::span<const double> z, double loss, std::span<const double> d,
             const Regularizer& regularizer, int capacity);
  size_t size() const { return losses.size(); }

 private:
  std::vector<double> gram_;  // size() x size(): (z_a - d) . (z_b - d)
  void make_room(size_t capacity, std::span<const double> d);
  void remove(size_t k, size_t params);
  void set_gram_row(size_t k, std::span<const double> d);
};

// Bundles written before the weights kept the last kRingDualPoints points in a ring, the next
// to be replaced at `next` once full. This puts them oldest first with all weight on the newest.
inline constexpr int kRingDualPoints = 16;
void ring_bundle_in_order(DualBundle& bundle, int64_t next, int64_t params);

}  // namespace pdsp
