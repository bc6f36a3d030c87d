#include "support/tiny_graphs.hpp"

#include <random>

#include "pdsp/data/dataset_builder.hpp"

namespace pdsp::testing {

GraphShape tree_shape() {
  return {{2, 3, 2, 3, 2, 2, 3}, {{0, 1}, {1, 2, 3}, {3, 4}, {1, 5}, {5, 6}}};
}

GraphShape loopy_shape() {
  GraphShape shape;
  shape.cards = {2, 3, 2, 2, 2, 3, 2, 2, 3};
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 3; ++c) {
      const int64_t v = 3 * r + c;
      if (c + 1 < 3) shape.factors.push_back({v, v + 1});
      if (r + 1 < 3) shape.factors.push_back({v, v + 3});
    }
  shape.factors.push_back({0, 4, 8});
  return shape;
}

GraphShape chain_shape(int length, int32_t card) {
  GraphShape shape;
  shape.cards.assign(static_cast<size_t>(length), card);
  for (int64_t v = 0; v + 1 < length; ++v) shape.factors.push_back({v, v + 1});
  return shape;
}

GraphShape grid_shape(int rows, int cols, bool diagonals) {
  GraphShape shape;
  shape.cards.assign(static_cast<size_t>(rows) * cols, 2);
  const auto id = [cols](int64_t r, int64_t c) { return r * cols + c; };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      if (c + 1 < cols) shape.factors.push_back({id(r, c), id(r, c + 1)});
      if (r + 1 < rows) shape.factors.push_back({id(r, c), id(r + 1, c)});
      if (diagonals && r + 1 < rows && c + 1 < cols) {
        shape.factors.push_back({id(r, c), id(r + 1, c + 1)});
        shape.factors.push_back({id(r, c + 1), id(r + 1, c)});
      }
    }
  return shape;
}

PlacedFactor place_factor(const GraphShape& shape, const std::vector<int64_t>& local,
                          const std::vector<int64_t>& ids) {
  PlacedFactor factor;
  for (int64_t v : local) {
    factor.vars.push_back(ids[v]);
    factor.table *= shape.cards[v];
  }
  return factor;
}

Dataset random_dataset(const std::vector<GraphShape>& shapes, int32_t num_params, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int32_t> param(0, num_params - 1);
  const auto random_rows = [&](int64_t count) {
    std::vector<FeatureRow> rows(static_cast<size_t>(count));
    for (auto& row : rows) {
      row.push_back({param(rng), normal(rng)});
      if (rng() % 2 == 0) row.push_back({param(rng), normal(rng)});
    }
    return rows;
  };
  DatasetBuilder builder(num_params);
  for (const GraphShape& shape : shapes) {
    builder.begin_example();
    std::vector<int64_t> ids;
    for (int32_t card : shape.cards)
      ids.push_back(builder.add_variable(
          card, std::uniform_int_distribution<int32_t>(0, card - 1)(rng), random_rows(card)));
    for (const auto& local : shape.factors) {
      const PlacedFactor factor = place_factor(shape, local, ids);
      builder.add_factor(factor.vars, random_rows(factor.table));
    }
  }
  return builder.finish();
}

void set_random_counting(Dataset& data, double low, double high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> c(low, high);
  data.var_counting.resize(static_cast<size_t>(data.num_vars()));
  data.factor_counting.resize(static_cast<size_t>(data.num_factors()));
  for (double& x : data.var_counting) x = c(rng);
  for (double& x : data.factor_counting) x = c(rng);
  data.counted = true;
}

Dataset frustrated_triangle() {
  DatasetBuilder builder(2);
  builder.begin_example();
  builder.add_variable(2, 1, {{{0, 1.0}}, {}});
  builder.add_variable(2, 1, {{}, {{0, 1.0}}});
  builder.add_variable(2, 1, {{}, {{0, 1.0}}});
  const std::vector<FeatureRow> agree = {{{1, 1.0}}, {}, {}, {{1, 1.0}}};
  builder.add_factor({0, 1}, agree);
  builder.add_factor({1, 2}, agree);
  builder.add_factor({0, 2}, agree);
  return builder.finish();
}

std::vector<double> normal_theta(int64_t params, double sd, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, sd);
  std::vector<double> theta(static_cast<size_t>(params));
  for (double& x : theta) x = normal(generator);
  return theta;
}

Dataset denoising_grids(const std::vector<bool>& noisy) {
  const double observed[2][16] = {{-0.01, -0.10, 0.50, 0.85, -1.16, -0.93, -0.43, -0.41, -1.21,
                                   -0.68, 0.80, 0.77, 0.69, -0.70, 1.13, -0.05},
                                  {-0.60, -0.50, 0.50, 0.70, -0.80, -0.70, 0.60, 0.50, -0.50, -0.90,
                                   0.80, 0.70, -0.60, -0.70, 0.90, 0.60}};
  DatasetBuilder builder(2);
  const std::vector<FeatureRow> agree = {{{1, 1.0}}, {}, {}, {{1, 1.0}}};
  for (const bool is_noisy : noisy) {
    builder.begin_example();
    int64_t first = 0;
    for (int v = 0; v < 16; ++v) {
      const int64_t id =
          builder.add_variable(2, v % 4 < 2 ? 0 : 1, {{}, {{0, observed[is_noisy ? 0 : 1][v]}}});
      if (v == 0) first = id;
    }
    for (int64_t v = first; v < first + 16; ++v) {
      if ((v - first) % 4 < 3) builder.add_factor({v, v + 1}, agree);
      if (v - first < 12) builder.add_factor({v, v + 4}, agree);
    }
  }
  return builder.finish();
}

NonlocalTerms three_state_terms(const Dataset& data, bool smooth_only) {
  NonlocalTerms terms;
  terms.num_states = 3;
  terms.count_a = {1.0, 0.0, 0.0, 0.0, -1.0, 1.0, 0.5, 0.5, -1.0};
  terms.count_b = {-0.8, 0.3, 0.2};
  terms.count_shape = {CountShape::SmoothedHinge, CountShape::SmoothedHinge, CountShape::Squared};
  for (int64_t n = 0; n < data.num_examples(); ++n) {
    for (int32_t j = 0; j < 3; ++j) terms.count_template.push_back(j);
    terms.count_offset.push_back(static_cast<int64_t>(terms.count_template.size()));
  }
  terms.word_ptr = {0, 3, 7};
  terms.word_state = {0, 1, 2, 2, 2, 1, 0};
  terms.unigram = terms.position = !smooth_only;
  return terms;
}

}  // namespace pdsp::testing
