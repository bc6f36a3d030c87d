#include "pdsp/learners/primal_dual/softmax_curvature.hpp"

#include <algorithm>
#include <limits>

namespace pdsp {

SoftmaxCurvature::SoftmaxCurvature(const LocalProblem& problem, Communicator& comm,
                                   std::vector<TypedBlock> blocks)
    : problem_(problem), comm_(comm), blocks_(std::move(blocks)) {
  const Dataset& data = problem_.data();
  const RegionTypes& types = data.var_types;
  block_start_.assign(1, 0);
  block_vars_.resize(blocks_.size());
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const TypedBlock& b = blocks_[i];
    block_start_.push_back(block_start_.back() + int64_t{b.states} * b.dim);
    for (int64_t v = 0; v < data.owned_vars() && !types.obs_row.empty(); ++v)
      if (types.type[v] == b.type && types.obs_row[v] >= 0) block_vars_[i].push_back(v);
  }
  packed_in_.resize(static_cast<size_t>(block_start_.back()));
  packed_out_.resize(packed_in_.size());
  chunk_sums_.resize(packed_in_.size() * kChunks);
}

void SoftmaxCurvature::multiply(std::span<const double> in, std::span<double> out) const {
  const Dataset& data = problem_.data();
  const ObservationRows& rows = data.observations;
  const std::span<const double> belief = problem_.beliefs();
  const double tau = std::max(problem_.temperature(), std::numeric_limits<double>::min());
  // Feature-major (dim x states) copies, so that an observation entry meets its states' values
  // contiguously.
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const TypedBlock& b = blocks_[i];
    double* packed = packed_in_.data() + block_start_[i];
    for (int32_t t = 0; t < b.states; ++t)
      for (int32_t j = 0; j < b.dim; ++j)
        packed[int64_t{j} * b.states + t] = in[b.offset + int64_t{t} * b.dim + j];
  }
  const size_t size = packed_in_.size();
  std::fill(chunk_sums_.begin(), chunk_sums_.end(), 0.0);
  const int64_t tasks = static_cast<int64_t>(blocks_.size()) * kChunks;
#pragma omp parallel for schedule(dynamic)
  for (int64_t task = 0; task < tasks; ++task) {
    const size_t i = static_cast<size_t>(task / kChunks);
    const int64_t chunk = task % kChunks;
    const int32_t states = blocks_[i].states;
    const double* packed = packed_in_.data() + block_start_[i];
    double* sums = chunk_sums_.data() + static_cast<size_t>(chunk) * size + block_start_[i];
    const std::vector<int64_t>& vars = block_vars_[i];
    const auto count = static_cast<int64_t>(vars.size());
    std::vector<double> u(static_cast<size_t>(states));
    for (int64_t k = chunk * count / kChunks; k < (chunk + 1) * count / kChunks; ++k) {
      const int64_t v = vars[k], row = data.var_types.obs_row[v];
      // u = the change of the variable's potentials along `in`; then Cov(b_v) u / tau.
      std::fill(u.begin(), u.end(), 0.0);
      for (int64_t e = rows.ptr[row]; e < rows.ptr[row + 1]; ++e) {
        const double x = rows.value_at(e);
        const double* w = packed + int64_t{rows.index[e]} * states;
#pragma omp simd
        for (int32_t t = 0; t < states; ++t) u[t] += x * w[t];
      }
      const double* p = belief.data() + data.state_offset[v];
      double mean = 0;
      for (int32_t t = 0; t < states; ++t) mean += p[t] * u[t];
      for (int32_t t = 0; t < states; ++t) u[t] = p[t] * (u[t] - mean) / tau;
      for (int64_t e = rows.ptr[row]; e < rows.ptr[row + 1]; ++e) {
        const double x = rows.value_at(e);
        double* sum = sums + int64_t{rows.index[e]} * states;
#pragma omp simd
        for (int32_t t = 0; t < states; ++t) sum[t] += x * u[t];
      }
    }
  }
  // Chunk by chunk in a fixed order, so that the result does not depend on the thread count.
  for (size_t r = 0; r < size; ++r) {
    double sum = 0;
    for (int64_t chunk = 0; chunk < kChunks; ++chunk)
      sum += chunk_sums_[static_cast<size_t>(chunk) * size + r];
    packed_out_[r] = sum;
  }
  comm_.allreduce_sum(packed_out_);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const TypedBlock& b = blocks_[i];
    const double* packed = packed_out_.data() + block_start_[i];
    for (int32_t t = 0; t < b.states; ++t)
      for (int32_t j = 0; j < b.dim; ++j)
        out[b.offset + int64_t{t} * b.dim + j] = packed[int64_t{j} * b.states + t];
  }
}

}  // namespace pdsp
