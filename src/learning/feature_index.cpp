#include "pdsp/learning/feature_index.hpp"

namespace pdsp {

FeatureIndex::FeatureIndex(const Dataset& data)
    : param_ptr_(static_cast<size_t>(data.num_params) + 1, 0) {
  const SparseRows* parts[2] = {&data.var_features, &data.factor_features};
  const int64_t base[2] = {0, data.num_states()};
  for (const SparseRows* rows : parts)
    for (int32_t r : rows->param) ++param_ptr_[r + 1];
  for (size_t r = 1; r < param_ptr_.size(); ++r) param_ptr_[r] += param_ptr_[r - 1];
  position_.resize(static_cast<size_t>(param_ptr_.back()));
  value_.resize(static_cast<size_t>(param_ptr_.back()));
  std::vector<int64_t> fill(param_ptr_.begin(), param_ptr_.end() - 1);
  for (int part = 0; part < 2; ++part) {
    const SparseRows& rows = *parts[part];
    for (int64_t i = 0; i < rows.num_rows(); ++i)
      for (int64_t k = rows.ptr[i]; k < rows.ptr[i + 1]; ++k) {
        const int64_t slot = fill[rows.param[k]]++;
        position_[slot] = base[part] + i;
        value_[slot] = rows.value[k];
      }
  }
}

void FeatureIndex::moments(std::span<const double> weight, std::span<double> z) const {
  const int64_t params = static_cast<int64_t>(param_ptr_.size()) - 1;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < params; ++r) {
    double sum = 0.0;
    for (int64_t k = param_ptr_[r]; k < param_ptr_[r + 1]; ++k)
      sum += weight[position_[k]] * value_[k];
    z[r] = sum;
  }
}

void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential) {
  const int64_t states = data.num_states();
  const int64_t rows = states + data.num_table_entries();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const bool is_state = i < states;
    const SparseRows& features = is_state ? data.var_features : data.factor_features;
    const int64_t row = is_state ? i : i - states;
    double u = (is_state && !loss.empty()) ? loss[i] : 0.0;
    for (int64_t k = features.ptr[row]; k < features.ptr[row + 1]; ++k)
      u += theta[features.param[k]] * features.value[k];
    potential[i] = u;
  }
}

}  // namespace pdsp
