#include "pdsp/features/feature_index.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/features/parameter_memory.hpp"

namespace pdsp {

std::vector<std::unique_ptr<FeatureEncoding>> make_feature_encodings(const Dataset& data,
                                                                     FeatureIndex::Order order,
                                                                     TypedKinds kinds) {
  std::vector<std::unique_ptr<FeatureEncoding>> encodings;
  encodings.push_back(std::make_unique<RowEncoding>(data, order));
  using Kind = TypedEncoding::Kind;
  for (auto [kind, wanted] :
       {std::pair{Kind::Variables, kinds.variables}, std::pair{Kind::Factors, kinds.factors}})
    if (auto typed = std::make_unique<TypedEncoding>(data, kind); wanted && typed->present())
      encodings.push_back(std::move(typed));
  return encodings;
}

FeatureIndex::FeatureIndex(const Dataset& data, Order order, TypedKinds kinds)
    : data_(data), kinds_(kinds) {
  check_parameter_memory(data, data.source());
  encodings_ = make_feature_encodings(data, order, kinds);
  rows_ = dynamic_cast<const RowEncoding*>(encodings_.front().get());
  for (const auto& encoding : encodings_) largest_row_sum_ += encoding->largest_row_sum();
}

void FeatureIndex::moments(std::span<const double> weight, std::span<double> z,
                           std::span<const uint8_t> skip_factor) const {
  const uint8_t* skip = skip_factor.empty() ? nullptr : skip_factor.data();
  std::fill(z.begin(), z.begin() + data_.num_params, 0.0);
  for (const auto& encoding : encodings_) encoding->add_moments(weight, z, skip);
}

void FeatureIndex::potentials(std::span<const double> theta, std::span<const double> base,
                              std::span<double> potential,
                              std::span<const uint8_t> skip_factor) const {
  const uint8_t* skip = skip_factor.empty() ? nullptr : skip_factor.data();
  rows_->set_potentials(theta, base, potential, skip);
  for (size_t k = 1; k < encodings_.size(); ++k)
    encodings_[k]->add_potentials(theta, potential, skip);
}

void FeatureIndex::example_potentials(int64_t n, std::span<const double> theta,
                                      std::span<const double> base,
                                      std::span<double> potential) const {
  for (int64_t i = data_.state_offset[data_.var_offset[n]];
       i < data_.state_offset[data_.var_offset[n + 1]]; ++i)
    potential[i] = base.empty() ? 0.0 : base[i];
  const int64_t states = data_.num_states();
  for (int64_t t = data_.table_offset[data_.factor_offset[n]];
       t < data_.table_offset[data_.factor_offset[n + 1]]; ++t)
    potential[states + t] = 0.0;
  for (const auto& encoding : encodings_) encoding->add_example_potentials(n, theta, potential);
}

void FeatureIndex::backward_truth(std::span<const double>, const GroundTruth& truth,
                                  std::span<double> z) const {
  std::fill(z.begin(), z.begin() + data_.num_params, 0.0);
  for (const auto& encoding : encodings_) encoding->add_truth_moments(truth, z);
}

std::vector<uint8_t> FeatureIndex::parameter_kinds() const {
  std::vector<uint8_t> kinds(static_cast<size_t>(data_.num_params), 0);
  for (int32_t r : data_.var_features.param) kinds[r] |= kVariableParameter;
  for (int32_t r : data_.factor_features.param) kinds[r] |= kFactorParameter;
  // A type's block spans its largest region's states.
  const auto mark_blocks = [&](const RegionTypes& types, const std::vector<LocalIndex>& offset,
                               uint8_t kind) {
    if (!types.present) return;
    std::vector<int64_t> size(static_cast<size_t>(types.num_types()), 0);
    for (size_t r = 0; r < types.type.size(); ++r)
      if (types.type[r] >= 0)
        size[types.type[r]] = std::max<int64_t>(size[types.type[r]], offset[r + 1] - offset[r]);
    for (int64_t k = 0; k < types.num_types(); ++k)
      for (int64_t p = 0; p < types.block_size(k, size[k]); ++p)
        kinds[types.param_offset[k] + p] |= kind;
  };
  if (kinds_.variables) mark_blocks(data_.var_types, data_.state_offset, kVariableParameter);
  if (kinds_.factors) mark_blocks(data_.factor_types, data_.table_offset, kFactorParameter);
  return kinds;
}

double FeatureIndex::largest_term(std::span<const double> theta) const {
  double largest_theta = 0.0;
  for (double t : theta) largest_theta = std::max(largest_theta, std::abs(t));
  return largest_theta * largest_row_sum_;
}

void FeatureIndex::add_example_moments(int64_t n, std::span<const double> weight,
                                       std::span<double> z) const {
  for (const auto& encoding : encodings_) encoding->add_example_moments(n, weight, z);
}

namespace {

// The feature row of position i of the potential layout.
struct Row {
  const SparseRows& features;
  int64_t row;
};

Row row_of(const Dataset& data, int64_t i) {
  return i < data.num_states() ? Row{data.var_features, i}
                               : Row{data.factor_features, i - data.num_states()};
}

double potential_of(const Dataset& data, int64_t i, std::span<const double> theta,
                    std::span<const double> loss) {
  const Row r = row_of(data, i);
  double u = (i < data.num_states() && !loss.empty()) ? loss[i] : 0.0;
  for (int64_t k = r.features.ptr[r.row]; k < r.features.ptr[r.row + 1]; ++k)
    u += theta[r.features.param[k]] * r.features.value[k];
  return u;
}

}  // namespace

void compute_potentials(const Dataset& data, std::span<const double> theta,
                        std::span<const double> loss, std::span<double> potential) {
  const int64_t positions = data.num_states() + data.num_table_entries();
  for (int64_t i = 0; i < positions; ++i) potential[i] = potential_of(data, i, theta, loss);
  for (auto kind : {TypedEncoding::Kind::Variables, TypedEncoding::Kind::Factors})
    TypedEncoding(data, kind).add_potentials(theta, potential);
}

}  // namespace pdsp
