#include "support/compact_data.hpp"

#include <algorithm>
#include <iterator>
#include <random>

#include "pdsp/data/dataset_builder.hpp"

namespace pdsp::testing {
namespace {

constexpr int32_t kRowParams = 4;  // parameters [0, 4) serve the format 1 rows
constexpr int32_t kMaxCard = 3;    // tiny_graphs' shapes use 2 or 3 states

}  // namespace

Dataset random_compact_dataset(const std::vector<GraphShape>& shapes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  // Parameter blocks: variable type 0 (dim 3) and 1 (dim 0), then factor type 0 (a table of up
  // to 27 entries, dim 0) and 1 (dim 2).
  const std::vector<int64_t> var_offset = {kRowParams, kRowParams + kMaxCard * 3};
  const std::vector<int64_t> factor_offset = {var_offset[1] + kMaxCard,
                                              var_offset[1] + kMaxCard + 27};
  const int64_t num_params = factor_offset[1] + 27 * 2;

  DatasetBuilder builder(num_params);
  std::vector<int32_t> var_type, factor_type;
  std::vector<int64_t> var_row, factor_row;
  std::vector<int64_t> obs_offset = {0};
  ObservationRows obs;
  auto add_row = [&](int dim, bool dense) {
    for (int32_t j = 0; j < dim; ++j)
      if (dense || rng() % 3 != 0) {
        obs.index.push_back(j);
        obs.value.push_back(normal(rng));
      }
    obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
    return static_cast<int64_t>(obs.ptr.size()) - 2;
  };
  auto maybe_rows = [&](int64_t count) {
    std::vector<FeatureRow> rows;
    if (rng() % 3 != 0) return rows;
    for (int64_t i = 0; i < count; ++i)
      rows.push_back({{static_cast<int32_t>(rng() % kRowParams), normal(rng)}});
    return rows;
  };
  for (const GraphShape& shape : shapes) {
    builder.begin_example();
    std::vector<int64_t> ids;
    for (int32_t card : shape.cards) {
      ids.push_back(builder.add_variable(
          card, std::uniform_int_distribution<int32_t>(0, card - 1)(rng), maybe_rows(card)));
      const int32_t type = static_cast<int32_t>(rng() % 3) - 1;  // -1, 0 or 1
      var_type.push_back(type);
      var_row.push_back(type == 0 ? add_row(3, false) : -1);
    }
    for (const auto& local : shape.factors) {
      const PlacedFactor factor = place_factor(shape, local, ids);
      builder.add_factor(factor.vars, maybe_rows(factor.table));
      const int32_t type = static_cast<int32_t>(rng() % 3) - 1;
      factor_type.push_back(type);
      factor_row.push_back(type == 1 ? add_row(2, true) : -1);
    }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = obs_offset;
  data.observations = obs;
  data.var_types = {true, var_offset, {3, 0}, var_type, {}};
  data.factor_types = {true, factor_offset, {0, 2}, factor_type, {}};
  for (int64_t row : var_row) data.var_types.obs_row.push_back(static_cast<LocalIndex>(row));
  for (int64_t row : factor_row) data.factor_types.obs_row.push_back(static_cast<LocalIndex>(row));
  return data;
}

Dataset ternary_chains_dataset(uint64_t seed) {
  return random_compact_dataset({chain_shape(4, 3), chain_shape(5, 3), chain_shape(2, 3),
                                 chain_shape(6, 3), chain_shape(3, 3), chain_shape(5, 3)},
                                seed);
}

Dataset wide_sparse_chains(int examples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  // Variable types 0 (wide), 1 (dim 0) and 2 (dim 70, no region); factor types 0 (a shared 3 x 3
  // table) and 1 (dim 2); then 5 parameters nothing reads.
  const std::vector<int64_t> var_offset = {kWideOffset, kWideOffset + kMaxCard * kWideDim,
                                           kWideOffset + kMaxCard * kWideDim + kMaxCard};
  const std::vector<int64_t> factor_offset = {var_offset[2] + 70, var_offset[2] + 70 + 9};
  DatasetBuilder builder(factor_offset[1] + 9 * 2 + 5);
  std::vector<int32_t> var_type, factor_type;
  std::vector<LocalIndex> var_row, factor_row;
  std::vector<int64_t> obs_offset = {0};
  ObservationRows obs;
  auto add_row = [&](const std::vector<int32_t>& positions) {
    for (int32_t j : positions) {
      obs.index.push_back(j);
      obs.value.push_back(normal(rng));
    }
    obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
    return static_cast<LocalIndex>(obs.num_rows() - 1);
  };
  for (int n = 0; n < examples; ++n) {
    builder.begin_example();
    // Positions j with j % 3 != 1, on the example's side of 75.
    const bool first_half = n < examples / 2;
    std::vector<int32_t> readable;
    for (int32_t j = first_half ? 0 : 75; j < (first_half ? 75 : kWideDim); ++j)
      if (j % 3 != 1) readable.push_back(j);
    const int length = 2 + static_cast<int>(rng() % 5);
    std::vector<int64_t> ids;
    for (int i = 0; i < length; ++i) {
      const int32_t card = rng() % 4 == 0 ? 2 : kMaxCard;
      std::vector<FeatureRow> rows;
      if (rng() % 3 == 0)
        for (int32_t t = 0; t < card; ++t)
          rows.push_back({{static_cast<int32_t>(rng() % kRowParams), normal(rng)}});
      ids.push_back(builder.add_variable(card, static_cast<int32_t>(rng() % card), rows));
      const int32_t type = static_cast<int32_t>(rng() % 3) - 1;  // -1, 0 or 1
      var_type.push_back(type);
      std::vector<int32_t> positions;
      std::sample(readable.begin(), readable.end(), std::back_inserter(positions), 5, rng);
      var_row.push_back(type == 0 ? add_row(positions) : LocalIndex{-1});
      if (i == 0) continue;
      builder.add_factor({ids[i - 1], ids[i]});
      const int32_t factor = static_cast<int32_t>(rng() % 2);
      factor_type.push_back(factor);
      factor_row.push_back(factor == 1 ? add_row({0, 1}) : LocalIndex{-1});
    }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = obs_offset;
  data.observations = obs;
  data.var_types = {true, var_offset, {kWideDim, 0, 70}, var_type, var_row};
  data.factor_types = {true, factor_offset, {0, 2}, factor_type, factor_row};
  return data;
}

Dataset expand_to_rows(const Dataset& compact) {
  Dataset rows = compact;
  rows.obs_offset.assign(compact.var_offset.size(), 0);
  rows.observations = {};
  rows.var_types = {};
  rows.factor_types = {};
  const RegionTypes* kinds[2] = {&compact.var_types, &compact.factor_types};
  const std::vector<LocalIndex>* offsets[2] = {&compact.state_offset, &compact.table_offset};
  const SparseRows* sources[2] = {&compact.var_features, &compact.factor_features};
  SparseRows* targets[2] = {&rows.var_features, &rows.factor_features};
  const ObservationRows& obs = compact.observations;
  for (int kind = 0; kind < 2; ++kind) {
    const SparseRows& from = *sources[kind];
    SparseRows to;
    const std::vector<LocalIndex>& offset = *offsets[kind];
    for (size_t r = 0; r + 1 < offset.size(); ++r)
      for (int64_t t = 0; t < offset[r + 1] - offset[r]; ++t) {
        const int64_t position = offset[r] + t;
        for (int64_t k = from.ptr[position]; k < from.ptr[position + 1]; ++k) {
          to.param.push_back(from.param[k]);
          to.value.push_back(from.value[k]);
        }
        const RegionTypes& types = *kinds[kind];
        const int32_t type = types.type[r];
        if (type >= 0 && types.dim[type] == 0) {
          to.param.push_back(static_cast<int32_t>(types.param_offset[type] + t));
          to.value.push_back(1.0);
        } else if (type >= 0) {
          const LocalIndex row = types.obs_row[r];
          for (int64_t e = obs.ptr[row]; e < obs.ptr[row + 1]; ++e) {
            to.param.push_back(static_cast<int32_t>(types.param_offset[type] + t * types.dim[type] +
                                                    obs.index[e]));
            to.value.push_back(obs.value_at(e));
          }
        }
        to.ptr.push_back(static_cast<LocalIndex>(to.param.size()));
      }
    *targets[kind] = to;
  }
  return rows;
}

Dataset multi_label_dataset(int examples) {
  constexpr int32_t kLabels = 5, kDim = 7;
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int32_t pairs = kLabels * (kLabels - 1) / 2;
  DatasetBuilder builder(kLabels * 2 * kDim + 4 * pairs);
  ObservationRows obs;
  std::vector<int64_t> obs_offset = {0};
  std::vector<int32_t> var_type, factor_type;
  std::vector<LocalIndex> var_row;
  for (int n = 0; n < examples; ++n) {
    builder.begin_example();
    const auto row = static_cast<LocalIndex>(obs.num_rows());
    for (int32_t j = 0; j < kDim; ++j)
      if (rng() % 5 != 0) {
        obs.index.push_back(j);
        obs.value.push_back(normal(rng));
      }
    obs.ptr.push_back(static_cast<LocalIndex>(obs.index.size()));
    std::vector<int64_t> ids;
    for (int32_t l = 0; l < kLabels; ++l) {
      ids.push_back(builder.add_variable(2, static_cast<int32_t>(rng() % 2)));
      const bool typed = l != 2 || n % 3 != 0;
      var_type.push_back(typed ? l : -1);
      var_row.push_back(typed ? row : -1);
    }
    for (int32_t i = 0, p = 0; i < kLabels; ++i)
      for (int32_t j = i + 1; j < kLabels; ++j, ++p) {
        builder.add_factor({ids[i], ids[j]});
        factor_type.push_back(p);
      }
    obs_offset.push_back(obs.num_rows());
  }
  Dataset data = builder.finish();
  data.obs_offset = obs_offset;
  data.observations = obs;
  std::vector<int64_t> label_offset, pair_offset;
  for (int32_t l = 0; l < kLabels; ++l) label_offset.push_back(l * 2 * kDim);
  for (int32_t p = 0; p < pairs; ++p) pair_offset.push_back(kLabels * 2 * kDim + 4 * p);
  data.var_types = {true, label_offset, std::vector<int32_t>(kLabels, kDim), var_type, var_row};
  data.factor_types = {true, pair_offset, std::vector<int32_t>(pairs, 0), factor_type, {}};
  return data;
}

Dataset shared_table_dataset(const std::vector<GraphShape>& shapes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  DatasetBuilder builder(kSharedTableRowParams + kSharedTableSize);
  std::vector<int32_t> types;
  for (size_t n = 0; n < shapes.size(); ++n) {
    const GraphShape& shape = shapes[n];
    builder.begin_example();
    std::vector<int64_t> ids;
    for (int32_t card : shape.cards) {
      std::vector<FeatureRow> rows;
      for (int32_t s = 0; s < card; ++s)
        rows.push_back({{static_cast<int32_t>(rng() % kSharedTableRowParams), normal(rng)}});
      ids.push_back(builder.add_variable(card, static_cast<int32_t>(rng() % card), rows));
    }
    for (size_t f = 0; f < shape.factors.size(); ++f) {
      const PlacedFactor factor = place_factor(shape, shape.factors[f], ids);
      std::vector<FeatureRow> rows;
      if (n == 0 && f == 0)
        for (int64_t t = 0; t < factor.table; ++t) rows.push_back({{0, normal(rng)}});
      builder.add_factor(factor.vars, rows);
      types.push_back(0);
    }
  }
  Dataset data = builder.finish();
  data.obs_offset.assign(data.var_offset.size(), 0);
  data.factor_types = {true, {kSharedTableRowParams}, {0}, types, {}};
  // No variable reads a type (expand_to_rows reads the variables' types too).
  data.var_types = {
      true, {}, {}, std::vector<int32_t>(static_cast<size_t>(data.num_vars()), -1), {}};
  return data;
}

}  // namespace pdsp::testing
