#pragma once
// The curvature memory of L-BFGS on theta (Nocedal & Wright, Numerical Optimization, §7.2): the
// last m pairs s = theta_{k+1} - theta_k, y = g_{k+1} - g_k and the two-loop recursion that
// turns a gradient g into the quasi-Newton direction -H g. Plain vectors, so that a checkpoint
// stores it exactly and a resume continues bitwise.
#include <functional>
#include <span>
#include <vector>

namespace pdsp {

// out = P^{-1} in for a model P of F's curvature (KroneckerCurvature).
using InverseCurvature = std::function<void(std::span<const double> in, std::span<double> out)>;

struct LbfgsMemory {
  // The kept pairs, each `params` values long, concatenated in a ring: pair i (0 the oldest) is
  // in slot (oldest + i) mod pairs. A full memory overwrites its oldest slot rather than moving
  // every other pair forward (on the citations' 5 million parameters that move was 720 MB a
  // iteration). Checkpoints hold the pairs oldest first (pair_s, pair_y).
  std::vector<double> s, y;
  int oldest = 0;
  // s'y of each slot's pair, in the same ring (complete_pair keeps it): the two-loop recursion
  // needs it for every pair each time (on the citations' 5 million parameters a direction takes a
  // fifth less time with the cache). Not in checkpoints: a reader recomputes it
  // (recompute_curvatures), the same value bitwise; direction() computes what is not cached.
  std::vector<double> curvatures;
  // The last accepted step and the gradient it was taken from: the next outer iteration's
  // gradient completes the pair. Empty after an iteration that took no step.
  std::vector<double> step, gradient;

  int pairs(size_t params) const { return params == 0 ? 0 : static_cast<int>(s.size() / params); }
  // Pair i, 0 the oldest.
  std::span<const double> pair_s(int i, size_t params) const { return slot(s, i, params); }
  std::span<const double> pair_y(int i, size_t params) const { return slot(y, i, params); }
  // Forms the pair of the pending step with `new_gradient` and keeps it (dropping the oldest
  // beyond `capacity`) unless its curvature s'y is not clearly positive; clears the pending step.
  // Returns whether the pair was kept.
  bool complete_pair(std::span<const double> new_gradient, int capacity);
  // Remembers an accepted step and the gradient it was taken from.
  void remember_step(std::span<const double> taken, std::span<const double> from_gradient);
  // d = -H g by the two-loop recursion, H_0 = gamma I with gamma = s'y / y'y of the newest pair,
  // or with a curvature model H_0 = gamma P^{-1}, gamma = s'y / y'P^{-1}y (H_0 = P^{-1} when
  // `rescale_inverse` is false: a model of the curvature's size, not only its shape); without
  // pairs d = -g, or -P^{-1} g. d must not overlap g. The products with P^{-1} go to `scratch`
  // (g's size, overlapping neither) when it is given, else to a temporary.
  void direction(std::span<const double> g, std::span<double> d,
                 const InverseCurvature& inverse = {}, bool rescale_inverse = true,
                 std::span<double> scratch = {}) const;
  // Fills `curvatures` from the pairs (after they were read or set by hand).
  void recompute_curvatures(size_t params);
  void clear();
  // Reserves the memory's full size (`capacity` pairs of `params`), so it never reallocates.
  void reserve(size_t params, int capacity);

 private:
  std::span<const double> slot(const std::vector<double>& pairs_of, int i, size_t params) const {
    const auto at = static_cast<size_t>((oldest + i) % pairs(params));
    return std::span<const double>(pairs_of).subspan(at * params, params);
  }
  // Drops the oldest pairs down to `kept` and puts the rest oldest first (oldest = 0).
  void keep_newest(int kept, size_t params);
};

}  // namespace pdsp
