#include "pdsp/data/dataset_builder.hpp"

#include <algorithm>
#include <stdexcept>

namespace pdsp {

void DatasetBuilder::begin_example() {
  if (open_example_) {
    data_.var_offset.push_back(data_.num_vars());
    data_.factor_offset.push_back(data_.num_factors());
  }
  open_example_ = true;
}

void DatasetBuilder::append_rows(SparseRows& rows, const std::vector<FeatureRow>& new_rows,
                                 int64_t count) {
  if (!new_rows.empty() && static_cast<int64_t>(new_rows.size()) != count)
    throw std::invalid_argument("DatasetBuilder: one feature row per state is required");
  for (int64_t i = 0; i < count; ++i) {
    if (!new_rows.empty())
      for (const auto& [param, value] : new_rows[i]) {
        rows.param.push_back(param);
        rows.value.push_back(value);
      }
    rows.ptr.push_back(to_local_index(rows.nnz(), "feature entries", "DatasetBuilder"));
  }
}

int64_t DatasetBuilder::add_variable(int32_t card, int32_t label,
                                     const std::vector<FeatureRow>& state_rows) {
  if (!open_example_) throw std::logic_error("DatasetBuilder: begin_example() first");
  data_.card.push_back(card);
  data_.label.push_back(label);
  any_label_ = any_label_ || label >= 0;
  append_rows(data_.var_features, state_rows, card);
  return data_.num_vars() - 1;
}

int64_t DatasetBuilder::add_factor(const std::vector<int64_t>& vars,
                                   const std::vector<FeatureRow>& table_rows) {
  if (!open_example_) throw std::logic_error("DatasetBuilder: begin_example() first");
  int64_t table = 1;
  for (int64_t v : vars) {
    data_.factor_vars.push_back(to_local_index(v, "variable ids", "DatasetBuilder"));
    table *= data_.card.at(v);
  }
  data_.factor_var_ptr.push_back(to_local_index(static_cast<int64_t>(data_.factor_vars.size()),
                                                "factor-variable edges", "DatasetBuilder"));
  append_rows(data_.factor_features, table_rows, table);
  return data_.num_factors() - 1;
}

Dataset DatasetBuilder::finish() {
  begin_example();
  open_example_ = false;
  if (std::any_of(data_.label.begin(), data_.label.end(), [](int32_t y) { return y < -1; }))
    throw std::invalid_argument("DatasetBuilder: a label is a state or -1 (unobserved)");
  // No label at all: a data set without labels; otherwise -1 marks an unobserved variable.
  if (!any_label_) data_.label.clear();
  data_.labelled = any_label_;
  data_.file_examples = data_.num_examples();
  data_.rebuild_offsets("DatasetBuilder");
  Dataset out;
  std::swap(out, data_);
  return out;
}

}  // namespace pdsp
