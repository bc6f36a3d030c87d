#include "pdsp/inference/factor_graph.hpp"

#include <algorithm>
#include <numeric>

namespace pdsp {
namespace {

// Every factor has the same arity and every variable the same cardinality (and there is at
// least one factor): returns that arity, else 0.
int64_t regular_arity(const Dataset& data) {
  if (data.num_factors() == 0) return 0;
  const int64_t arity = data.arity(0);
  for (int64_t a = 1; a < data.num_factors(); ++a)
    if (data.arity(a) != arity) return 0;
  for (int32_t card : data.card)
    if (card != data.card[0]) return 0;
  return arity;
}

}  // namespace

FactorGraph::FactorGraph(const Dataset& data, const std::string& source, Form form) {
  num_slots_ = static_cast<int64_t>(data.factor_vars.size());
  const int64_t vars = data.num_vars();
  for (int64_t v : data.factor_vars) num_message_entries_ += data.card[v];
  to_local_index(num_message_entries_, "message entries", source);

  if (form == Form::Auto) arity_ = regular_arity(data);
  if (arity_ > 0) {
    card_ = data.card[0];
    regular_stride_.assign(static_cast<size_t>(arity_), 1);
    for (int64_t k = arity_ - 2; k >= 0; --k) regular_stride_[k] = regular_stride_[k + 1] * card_;
    max_table = regular_stride_[0] * card_;
  } else {
    slot_factor_.resize(static_cast<size_t>(num_slots_));
    slot_stride_.resize(static_cast<size_t>(num_slots_));
    message_offset_.assign(static_cast<size_t>(num_slots_) + 1, 0);
    for (int64_t a = 0; a < data.num_factors(); ++a) {
      int64_t stride = 1;
      for (int64_t e = data.factor_var_ptr[a + 1] - 1; e >= data.factor_var_ptr[a]; --e) {
        slot_factor_[e] = static_cast<LocalIndex>(a);
        slot_stride_[e] = static_cast<LocalIndex>(stride);
        stride *= data.card[data.factor_vars[e]];
      }
      max_table = std::max(max_table, stride);
    }
    for (int64_t e = 0; e < num_slots_; ++e)
      message_offset_[e + 1] = message_offset_[e] + data.card[data.factor_vars[e]];
  }

  var_slot_ptr.assign(static_cast<size_t>(vars) + 1, 0);
  for (int64_t e = 0; e < num_slots_; ++e) ++var_slot_ptr[data.factor_vars[e] + 1];
  for (int64_t v = 0; v < vars; ++v) var_slot_ptr[v + 1] += var_slot_ptr[v];
  var_slots.resize(static_cast<size_t>(num_slots_));
  std::vector<int64_t> fill(var_slot_ptr.begin(), var_slot_ptr.end() - 1);
  const auto add_slots_of = [&](int64_t a) {
    for (int64_t e = data.factor_var_ptr[a]; e < data.factor_var_ptr[a + 1]; ++e)
      var_slots[fill[data.factor_vars[e]]++] = static_cast<LocalIndex>(e);
  };
  if (data.shard) {
    // A shard keeps its own factors before its copies of others': each variable still lists its
    // slots in file order, so that its update sums them in the unsharded run's order.
    const std::vector<int64_t>& global = data.shard->global_factor;
    std::vector<int64_t> order(static_cast<size_t>(data.num_factors()));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return global[a] < global[b]; });
    for (int64_t a : order) add_slots_of(a);
  } else {
    for (int64_t a = 0; a < data.num_factors(); ++a) add_slots_of(a);
  }

  for (int64_t v = 0; v < vars; ++v) {
    max_card = std::max<int64_t>(max_card, data.card[v]);
    max_degree = std::max(max_degree, degree(v));
  }
}

}  // namespace pdsp
