#pragma once
// The curvature of F on typed variable blocks as each variable's soft-max sees it:
//   A = sum_v Cov(b_v) (x) x_v x_v' / tau
// over the variables of a block (u_v(t) = sum_j theta[offset + t dim + j] x_vj), correlations
// between variables left out. KroneckerCurvature averages this into one Kronecker product; A
// keeps which pixels go with which states (OCR: a letter's likely states depend on its pixels),
// and its product with a vector costs two passes over the observations, so it is used through
// a few conjugate-gradient steps rather than inverted.
#include <cstdint>
#include <span>
#include <vector>

#include "pdsp/learning/local_problem.hpp"
#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

// A typed variable block: parameters [offset, offset + states * dim), row-major by state.
struct TypedBlock {
  int32_t type = 0;
  int64_t offset = 0;
  int32_t states = 0, dim = 0;
};

class SoftmaxCurvature {
 public:
  SoftmaxCurvature(const LocalProblem& problem, Communicator& comm, std::vector<TypedBlock> blocks);

  // Collective: out = A in on the blocks' parameters, from the beliefs of the problem's last
  // evaluation; the parameters outside the blocks are left as they are.
  void multiply(std::span<const double> in, std::span<double> out) const;

 private:
  const LocalProblem& problem_;
  Communicator& comm_;
  std::vector<TypedBlock> blocks_;
  std::vector<int64_t> block_start_;              // [blocks + 1] position in the packed vectors
  std::vector<std::vector<int64_t>> block_vars_;  // [blocks] local variables with observations
  // Each block's variables are split into this many chunks, summed apart and then in order.
  static constexpr int64_t kChunks = 32;
  // Feature-major (dim x states) vectors of all blocks, one after the other; per-chunk sums.
  mutable std::vector<double> packed_in_, packed_out_, chunk_sums_;
};

}  // namespace pdsp
