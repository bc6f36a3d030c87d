#include "pdsp/features/function_class_model.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "pdsp/features/typed_regions.hpp"
#include "pdsp/inference/vector_math.hpp"

namespace pdsp {
namespace {

// At most this many blocks of regions in the backward pass: their gradients stay small beside
// the regions' potentials.
constexpr int64_t kMaxBlocks = 256;
constexpr int64_t kMinBlockRegions = 1024;

}  // namespace

std::string function_class_name(FunctionClass c) {
  switch (c) {
    case FunctionClass::Zero:
      return "zero";
    case FunctionClass::Constant:
      return "constant";
    case FunctionClass::Linear:
      return "linear";
    case FunctionClass::Trees:
      return "trees";
    case FunctionClass::Mlp:
      return "mlp";
  }
  return "?";
}

FunctionClassModel::FunctionClassModel(const Dataset& data, const FunctionClasses& classes)
    : data_(data),
      unary_(classes.unary),
      pairwise_(classes.pairwise),
      seed_(classes.seed),
      linear_(data, FeatureIndex::Order::Auto,
              {classes.unary == FunctionClass::Linear, classes.pairwise == FunctionClass::Linear}) {
  // The networks of the kinds whose class is one, by type; their states (a region's largest,
  // agreed by every rank so that all have the same parameters) and offsets once all are known.
  const auto add_kind = [&](const RegionTypes& types, FunctionClass c,
                            const std::vector<LocalIndex>& region_offset, uint8_t kind) {
    std::vector<int32_t> network_of(static_cast<size_t>(types.num_types()), -1);
    if ((c != FunctionClass::Mlp && c != FunctionClass::Constant) || !types.present)
      return network_of;
    const int hidden = c == FunctionClass::Mlp ? classes.hidden : 0;
    const size_t first = networks_.size();
    for (int64_t k = 0; k < types.num_types(); ++k) {
      network_of[static_cast<size_t>(k)] = static_cast<int32_t>(networks_.size());
      networks_.push_back({kind, 0, types.dim[k], 0, hidden, {}, {}});
    }
    for (size_t r = 0; r < types.type.size(); ++r)
      if (types.type[r] >= 0) {
        int& states = networks_[first + static_cast<size_t>(types.type[r])].states;
        states = std::max(states, static_cast<int>(region_offset[r + 1] - region_offset[r]));
      }
    return network_of;
  };
  const std::vector<int32_t> var_network =
      add_kind(data.var_types, classes.unary, data.state_offset, kVariableParameter);
  const std::vector<int32_t> factor_network =
      add_kind(data.factor_types, classes.pairwise, data.table_offset, kFactorParameter);
  if (!networks_.empty()) {
    std::vector<double> states;
    for (const Network& net : networks_) states.push_back(net.states);
    data.communicator().allreduce({}, states);
    for (size_t k = 0; k < networks_.size(); ++k) networks_[k].states = static_cast<int>(states[k]);
  }
  int64_t offset = data.num_params;
  for (Network& net : networks_) {
    net.offset = offset;
    offset +=
        int64_t{net.hidden} * net.dim + net.hidden + int64_t{net.states} * net.hidden + net.states;
  }
  network_params_ = offset - data.num_params;
  if (classes.unary == FunctionClass::Trees || classes.pairwise == FunctionClass::Trees)
    trees_ = std::make_unique<TreeFunctions>(
        data,
        TypedKinds{classes.unary == FunctionClass::Trees, classes.pairwise == FunctionClass::Trees},
        classes.trees, classes.stored_trees, classes.trees_from_file, classes.source);

  const auto add_region = [&](const TypedRegion& r) {
    const int32_t network = (r.factor ? factor_network : var_network)[r.type];
    if (network < 0) return;
    regions_.push_back(
        {network, r.position, r.size, r.obs_row, r.factor ? r.local : -1, hidden_units_});
    hidden_units_ += networks_[static_cast<size_t>(network)].hidden;
  };
  example_regions_.push_back(0);
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    for_each_typed_region(data, n, add_region);
    example_regions_.push_back(static_cast<int64_t>(regions_.size()));
  }
  for_each_copied_typed_factor(data, add_region);
  if (classes.standardize_inputs) standardize_inputs();
  const auto regions = static_cast<int64_t>(regions_.size());
  block_regions_ = std::max(kMinBlockRegions, (regions + kMaxBlocks - 1) / kMaxBlocks);
  const int64_t blocks = (regions + block_regions_ - 1) / block_regions_;
  block_grad_.assign(static_cast<size_t>(blocks * network_params_), 0.0);
}

std::string FunctionClassModel::name() const {
  return function_class_name(unary_) + "/" + function_class_name(pairwise_);
}

std::span<const FunctionClassModel::Region> FunctionClassModel::example_regions(int64_t n) const {
  return std::span<const Region>(regions_).subspan(
      static_cast<size_t>(example_regions_[n]),
      static_cast<size_t>(example_regions_[n + 1] - example_regions_[n]));
}

void FunctionClassModel::standardize_inputs() {
  // Per network: its regions, then each column's sum and sum of squares (absent entries are 0).
  std::vector<size_t> at;
  size_t size = 0;
  for (const Network& net : networks_) {
    at.push_back(size);
    if (net.hidden > 0) size += 1 + 2 * static_cast<size_t>(net.dim);
  }
  std::vector<double> sums(size, 0.0);
  const ObservationRows& obs = data_.observations;
  for (int64_t r = 0; r < example_regions_.back(); ++r) {
    const Region& region = regions_[static_cast<size_t>(r)];
    const Network& net = networks_[static_cast<size_t>(region.network)];
    if (net.hidden == 0) continue;
    double* sum = sums.data() + at[static_cast<size_t>(region.network)];
    sum[0] += 1;
    if (region.obs_row < 0) continue;
    for (int64_t k = obs.ptr[region.obs_row]; k < obs.ptr[region.obs_row + 1]; ++k) {
      const double x = obs.value_at(k);
      sum[1 + obs.index[k]] += x;
      sum[1 + net.dim + obs.index[k]] += x * x;
    }
  }
  data_.communicator().allreduce(sums, {});
  for (size_t k = 0; k < networks_.size(); ++k) {
    Network& net = networks_[k];
    if (net.hidden == 0) continue;
    const double* sum = sums.data() + at[k];
    net.input_mean.assign(static_cast<size_t>(net.dim), 0.0);
    net.input_scale.assign(static_cast<size_t>(net.dim), 1.0);
    const double count = std::max(sum[0], 1.0);
    for (int j = 0; j < net.dim; ++j) {
      const double mean = sum[1 + j] / count;
      const double sd = std::sqrt(std::max(0.0, sum[1 + net.dim + j] / count - mean * mean));
      // Below this the column is constant up to the round-off of its sums.
      if (sd <= 1e-7 * std::max(1.0, std::abs(mean))) continue;
      net.input_mean[static_cast<size_t>(j)] = mean;
      net.input_scale[static_cast<size_t>(j)] = sd;
    }
  }
}

std::vector<double> FunctionClassModel::input_major(std::span<const double> theta) const {
  std::vector<double> weights(theta.begin() + data_.num_params, theta.end());
  for (const Network& net : networks_) {
    const double* U = theta.data() + net.offset;
    double* by_input = weights.data() + (net.offset - data_.num_params);
    double* b = by_input + int64_t{net.hidden} * net.dim;
    const bool standardized = !net.input_scale.empty();
    for (int i = 0; i < net.hidden; ++i)
      for (int j = 0; j < net.dim; ++j) {
        double u = U[int64_t{i} * net.dim + j];
        if (standardized) {
          u /= net.input_scale[static_cast<size_t>(j)];
          b[i] -= u * net.input_mean[static_cast<size_t>(j)];
        }
        by_input[int64_t{j} * net.hidden + i] = u;
      }
  }
  return weights;
}

void FunctionClassModel::add_in_file_order(const double* gradient, double* out) const {
  for (const Network& net : networks_) {
    const int64_t local = net.offset - data_.num_params;
    const int64_t inputs = int64_t{net.hidden} * net.dim;
    const int64_t end = local + inputs + net.hidden + int64_t{net.states} * net.hidden + net.states;
    const double* db = gradient + local + inputs;
    const bool standardized = !net.input_scale.empty();
    for (int i = 0; i < net.hidden; ++i)
      for (int j = 0; j < net.dim; ++j) {
        double g = gradient[local + int64_t{j} * net.hidden + i];
        if (standardized)
          g = (g - db[i] * net.input_mean[static_cast<size_t>(j)]) /
              net.input_scale[static_cast<size_t>(j)];
        out[local + int64_t{i} * net.dim + j] += g;
      }
    for (int64_t p = local + inputs; p < end; ++p) out[p] += gradient[p];
  }
}

std::vector<double> FunctionClassModel::model_file_theta(std::span<const double> theta) const {
  std::vector<double> stored(theta.begin(), theta.end());
  const std::vector<double> weights = input_major(theta);
  for (const Network& net : networks_) {
    const double* by_input = weights.data() + (net.offset - data_.num_params);
    double* U = stored.data() + net.offset;
    for (int i = 0; i < net.hidden; ++i)
      for (int j = 0; j < net.dim; ++j)
        U[int64_t{i} * net.dim + j] = by_input[int64_t{j} * net.hidden + i];
    const int64_t inputs = int64_t{net.hidden} * net.dim;
    std::copy(by_input + inputs, by_input + inputs + net.hidden, U + inputs);
  }
  return stored;
}

FunctionClassModel::Scratch FunctionClassModel::scratch() const {
  int widest = 0;
  for (const Network& net : networks_) widest = std::max(widest, net.hidden);
  const auto size = static_cast<size_t>(round_up_to_vector(widest));
  return {std::vector<double>(size), std::vector<double>(size)};
}

const double* FunctionClassModel::hidden_layer(const Region& r, const double* weights,
                                               Scratch& scratch) const {
  const Network& net = networks_[static_cast<size_t>(r.network)];
  const int64_t hidden = net.hidden;
  const double* by_input = weights + (net.offset - data_.num_params);
  const double* b = by_input + hidden * net.dim;
  double* h = scratch.hidden.data();
  std::copy(b, b + hidden, h);
  // Padding to whole vectors keeps libm's scalar exp (other round-off) off the last units.
  const auto padded = static_cast<int64_t>(scratch.hidden.size());
  std::fill(h + hidden, h + padded, 0.0);
  if (r.obs_row >= 0) {
    const ObservationRows& obs = data_.observations;
    for (int64_t k = obs.ptr[r.obs_row]; k < obs.ptr[r.obs_row + 1]; ++k) {
      const double x = obs.value_at(k);
      const double* column = by_input + int64_t{obs.index[k]} * hidden;
#pragma omp simd
      for (int64_t i = 0; i < hidden; ++i) h[i] += column[i] * x;
    }
  }
#pragma omp simd
  for (int64_t i = 0; i < padded; ++i) h[i] = 1.0 / (1.0 + std::exp(-h[i]));
  return h;
}

void FunctionClassModel::region_forward(const Region& r, const double* weights, const double* h,
                                        double* potential) const {
  const Network& net = networks_[static_cast<size_t>(r.network)];
  const double* W =
      weights + (net.offset - data_.num_params) + int64_t{net.hidden} * net.dim + net.hidden;
  const double* c = W + int64_t{net.states} * net.hidden;
  for (int32_t t = 0; t < r.size; ++t) {
    double out = c[t];
    for (int i = 0; i < net.hidden; ++i) out += W[int64_t{t} * net.hidden + i] * h[i];
    potential[r.position + t] += out;
  }
}

void FunctionClassModel::region_backward(const Region& r, const double* weights, const double* h,
                                         const double* weight, double* grad,
                                         Scratch& scratch) const {
  const Network& net = networks_[static_cast<size_t>(r.network)];
  const int64_t hidden = net.hidden;
  const int64_t local = net.offset - data_.num_params;
  const double* W = weights + local + hidden * net.dim + hidden;
  double* dU = grad + local;  // input-major, as `weights`
  double* db = dU + hidden * net.dim;
  double* dW = db + hidden;
  double* dc = dW + int64_t{net.states} * hidden;
  double* pre = scratch.pre.data();  // d(w . f) / d(hidden i), then through the sigmoid
  std::fill(pre, pre + hidden, 0.0);
  for (int32_t t = 0; t < r.size; ++t) {
    const double w = weight[r.position + t];
#pragma omp simd
    for (int64_t i = 0; i < hidden; ++i) pre[i] += w * W[t * hidden + i];
  }
  for (int64_t i = 0; i < hidden; ++i) {
    pre[i] = pre[i] * h[i] * (1.0 - h[i]);
    db[i] += pre[i];
  }
  if (r.obs_row >= 0) {
    const ObservationRows& obs = data_.observations;
    for (int64_t k = obs.ptr[r.obs_row]; k < obs.ptr[r.obs_row + 1]; ++k) {
      const double x = obs.value_at(k);
      double* column = dU + int64_t{obs.index[k]} * hidden;
#pragma omp simd
      for (int64_t i = 0; i < hidden; ++i) column[i] += pre[i] * x;
    }
  }
  for (int32_t t = 0; t < r.size; ++t) {
    const double w = weight[r.position + t];
    dc[t] += w;
#pragma omp simd
    for (int64_t i = 0; i < hidden; ++i) dW[t * hidden + i] += w * h[i];
  }
}

void FunctionClassModel::forward(std::span<const double> theta, std::span<const double> base,
                                 std::span<double> potential,
                                 std::span<const uint8_t> skip_factor) const {
  linear_.forward(theta.first(static_cast<size_t>(data_.num_params)), base, potential, skip_factor);
  std::vector<double> weights = input_major(theta);
  const auto regions = static_cast<int64_t>(regions_.size());
  kept_.hidden.resize(static_cast<size_t>(hidden_units_));
#pragma omp parallel
  {
    Scratch work = scratch();
#pragma omp for schedule(static)
    for (int64_t r = 0; r < regions; ++r) {
      const Region& region = regions_[r];
      if (skipped(region, skip_factor)) continue;
      const double* h = hidden_layer(region, weights.data(), work);
      const int hidden = networks_[static_cast<size_t>(region.network)].hidden;
      std::copy(h, h + hidden, kept_.hidden.begin() + region.hidden_at);
      region_forward(region, weights.data(), h, potential.data());
    }
  }
  kept_.weights = std::move(weights);
  kept_.skip_factor.assign(skip_factor.begin(), skip_factor.end());
  if (trees_) trees_->add_to(potential, skip_factor);
}

void FunctionClassModel::backward(std::span<const double> theta, std::span<const double> weight,
                                  std::span<double> z, std::span<const uint8_t> skip_factor) const {
  linear_.backward(theta.first(static_cast<size_t>(data_.num_params)), weight, z, skip_factor);
  const std::vector<double> weights = input_major(theta);
  // The hidden layers of the last forward pass serve when it was at the same networks and
  // regions (the trainers' gradient follows the forward pass of the accepted theta).
  const bool kept =
      weights == kept_.weights && std::equal(skip_factor.begin(), skip_factor.end(),
                                             kept_.skip_factor.begin(), kept_.skip_factor.end());
  const auto regions = static_cast<int64_t>(regions_.size());
  const int64_t blocks = (regions + block_regions_ - 1) / block_regions_;
#pragma omp parallel
  {
    Scratch work = scratch();
#pragma omp for schedule(dynamic)
    for (int64_t block = 0; block < blocks; ++block) {
      double* grad = block_grad_.data() + block * network_params_;
      std::fill(grad, grad + network_params_, 0.0);
      for (int64_t r = block * block_regions_; r < std::min(regions, (block + 1) * block_regions_);
           ++r)
        if (!skipped(regions_[r], skip_factor)) {
          const Region& region = regions_[r];
          const double* h = kept ? kept_.hidden.data() + region.hidden_at
                                 : hidden_layer(region, weights.data(), work);
          region_backward(region, weights.data(), h, weight.data(), grad, work);
        }
    }
  }
  std::vector<double> total(static_cast<size_t>(network_params_), 0.0);
  for (int64_t block = 0; block < blocks; ++block)
    for (int64_t p = 0; p < network_params_; ++p)
      total[p] += block_grad_[block * network_params_ + p];
  double* out = z.data() + data_.num_params;
  std::fill(out, out + network_params_, 0.0);
  add_in_file_order(total.data(), out);
}

void FunctionClassModel::forward_example(int64_t n, std::span<const double> theta,
                                         std::span<const double> base,
                                         std::span<double> potential) const {
  linear_.forward_example(n, theta.first(static_cast<size_t>(data_.num_params)), base, potential);
  const std::vector<double> weights = input_major(theta);
  Scratch work = scratch();
  for (const Region& r : example_regions(n))
    region_forward(r, weights.data(), hidden_layer(r, weights.data(), work), potential.data());
  if (trees_) trees_->add_example_to(n, potential);
}

void FunctionClassModel::add_backward_example(int64_t n, std::span<const double> theta,
                                              std::span<const double> weight,
                                              std::span<double> z) const {
  linear_.add_backward_example(n, theta.first(static_cast<size_t>(data_.num_params)), weight, z);
  const std::vector<double> weights = input_major(theta);
  std::vector<double> grad(static_cast<size_t>(network_params_), 0.0);
  Scratch work = scratch();
  for (const Region& r : example_regions(n))
    region_backward(r, weights.data(), hidden_layer(r, weights.data(), work), weight.data(),
                    grad.data(), work);
  add_in_file_order(grad.data(), z.data() + data_.num_params);
}

double FunctionClassModel::largest_term(std::span<const double> theta) const {
  double largest = 0.0;
  for (const Network& net : networks_) {
    const double* W = theta.data() + net.offset + int64_t{net.hidden} * net.dim + net.hidden;
    const double* c = W + int64_t{net.states} * net.hidden;
    for (int t = 0; t < net.states; ++t) {
      double bound = std::abs(c[t]);
      for (int i = 0; i < net.hidden; ++i) bound += std::abs(W[int64_t{t} * net.hidden + i]);
      largest = std::max(largest, bound);
    }
  }
  return linear_.largest_term(theta.first(static_cast<size_t>(data_.num_params))) + largest +
         (trees_ ? trees_->largest_term() : 0.0);
}

std::vector<uint8_t> FunctionClassModel::parameter_kinds() const {
  std::vector<uint8_t> kinds = linear_.parameter_kinds();
  kinds.resize(static_cast<size_t>(num_params()), 0);
  for (size_t k = 0; k < networks_.size(); ++k) {
    const int64_t end = k + 1 < networks_.size() ? networks_[k + 1].offset : num_params();
    std::fill(kinds.begin() + networks_[k].offset, kinds.begin() + end, networks_[k].kind);
  }
  return kinds;
}

std::vector<double> FunctionClassModel::initial_theta() const {
  std::vector<double> theta(static_cast<size_t>(num_params()), 0.0);
  std::mt19937_64 rng(seed_);
  for (const Network& net : networks_) {
    double* U = theta.data() + net.offset;
    double* W = U + int64_t{net.hidden} * net.dim + net.hidden;
    std::normal_distribution<double> input(0.0, 1.0 / std::sqrt(std::max(net.dim, 1)));
    std::normal_distribution<double> output(0.0, 1.0 / std::sqrt(std::max(net.hidden, 1)));
    for (int64_t i = 0; i < int64_t{net.hidden} * net.dim; ++i) U[i] = input(rng);
    for (int64_t i = 0; i < int64_t{net.states} * net.hidden; ++i) W[i] = output(rng);
  }
  return theta;
}

}  // namespace pdsp
