#pragma once
// Builds a Dataset example by example, in file order (generators, converters and tests).
#include <utility>
#include <vector>

#include "pdsp/data/dataset.hpp"

namespace pdsp {

// A feature row: (parameter index, value) pairs.
using FeatureRow = std::vector<std::pair<int32_t, double>>;

class DatasetBuilder {
 public:
  explicit DatasetBuilder(int64_t num_params) { data_.num_params = num_params; }

  // Closes the current example (if any) and starts a new one.
  void begin_example();
  // Adds a variable to the current example; `state_rows` has one row per state (or is empty for
  // no features). `label` -1 is unobserved; when every label is -1 the data set has no labels.
  // Returns the global variable id.
  int64_t add_variable(int32_t card, int32_t label, const std::vector<FeatureRow>& state_rows = {});
  // Adds a factor over variables of the current example; `table_rows` has one row per joint
  // state, row-major with the last variable fastest (or is empty). Returns the factor id.
  int64_t add_factor(const std::vector<int64_t>& vars,
                     const std::vector<FeatureRow>& table_rows = {});

  Dataset finish();

 private:
  static void append_rows(SparseRows& rows, const std::vector<FeatureRow>& new_rows, int64_t count);
  Dataset data_;
  bool open_example_ = false;
  bool any_label_ = false;
};

}  // namespace pdsp
