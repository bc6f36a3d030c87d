#include "pdsp/inference/shard_slice.hpp"

#include <algorithm>
#include <numeric>

namespace pdsp {
namespace {

// A slot to exchange: sorted by (colour of its variable, position in the file) on both sides.
struct SlotKey {
  int32_t colour;
  int64_t global_slot;
  LocalIndex local_slot;
  bool operator<(const SlotKey& other) const {
    return colour != other.colour ? colour < other.colour : global_slot < other.global_slot;
  }
};

struct NeighbourLists {
  std::vector<SlotKey> send, recv;
  std::vector<int64_t> send_vars, recv_vars;  // file order (whole-example ids)
};

// Sorted slots grouped by colour class: the class pointers and the local slots.
void group_by_class(std::vector<SlotKey>& keys, int32_t colours, std::vector<int64_t>& class_ptr,
                    std::vector<LocalIndex>& slots) {
  std::sort(keys.begin(), keys.end());
  class_ptr.assign(static_cast<size_t>(colours) + 1, 0);
  for (const SlotKey& key : keys) ++class_ptr[key.colour + 1];
  std::partial_sum(class_ptr.begin(), class_ptr.end(), class_ptr.begin());
  slots.clear();
  for (const SlotKey& key : keys) slots.push_back(key.local_slot);
}

std::vector<LocalIndex> unique_local(std::vector<int64_t>& whole_ids,
                                     const std::vector<LocalIndex>& local_of) {
  std::sort(whole_ids.begin(), whole_ids.end());
  whole_ids.erase(std::unique(whole_ids.begin(), whole_ids.end()), whole_ids.end());
  std::vector<LocalIndex> local;
  for (int64_t v : whole_ids) local.push_back(local_of[v]);
  return local;
}

}  // namespace

ShardSelection select_shard(const Dataset& structure, const FactorGraph& graph,
                            const Colouring& colouring, const ShardPartition& partition,
                            std::span<const uint8_t> acyclic, int index, int first_rank) {
  const Dataset& whole = structure;
  const int64_t n_vars = whole.num_vars(), n_factors = whole.num_factors();
  const std::vector<int32_t>& shard_of = partition.shard_of;
  const auto first_var_of = [&](int64_t a) { return whole.factor_vars[whole.factor_var_ptr[a]]; };

  // Own variables, then the halo, each in file order; own factors, then the copies.
  ShardSelection selection;
  std::vector<int64_t>& vars = selection.vars;
  std::vector<int64_t>& factors = selection.factors;
  std::vector<char> holds(static_cast<size_t>(n_factors), 0),
      in_halo(static_cast<size_t>(n_vars), 0);
  for (int64_t a = 0; a < n_factors; ++a)
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] == index) holds[a] = 1;
  for (int64_t v = 0; v < n_vars; ++v)
    if (shard_of[v] == index) vars.push_back(v);
  selection.own_vars = static_cast<int64_t>(vars.size());
  for (int64_t a = 0; a < n_factors; ++a)
    if (holds[a] && shard_of[first_var_of(a)] == index) factors.push_back(a);
  selection.own_factors = static_cast<int64_t>(factors.size());
  for (int64_t a = 0; a < n_factors; ++a)
    if (holds[a] && shard_of[first_var_of(a)] != index) factors.push_back(a);
  for (int64_t a : factors)
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] != index) in_halo[whole.factor_vars[k]] = 1;
  for (int64_t v = 0; v < n_vars; ++v)
    if (in_halo[v]) vars.push_back(v);
  std::vector<LocalIndex> local_of(static_cast<size_t>(n_vars), -1);
  for (size_t i = 0; i < vars.size(); ++i) local_of[vars[i]] = static_cast<LocalIndex>(i);

  auto shard = std::make_shared<ExampleShard>();
  shard->index = index;
  shard->example = whole.first_example;
  shard->examples = whole.num_examples();
  shard->cut_factors = partition.cut_factors;
  shard->shard_variables = partition.variables;
  shard->method = partition.method;
  shard->example_acyclic = std::all_of(acyclic.begin(), acyclic.end(), [](uint8_t a) { return a; });
  for (int64_t v : vars) shard->var_acyclic.push_back(acyclic[v]);
  // Class c of every example is swept as one class: examples share no factor.
  std::vector<int32_t> colour_of(static_cast<size_t>(n_vars), 0);
  for (int64_t n = 0; n < whole.num_examples(); ++n) {
    const int64_t classes = colouring.num_classes(n);
    shard->colours = std::max(shard->colours, static_cast<int32_t>(classes));
    for (int64_t c = 0; c < classes; ++c)
      for (LocalIndex v : colouring.members(colouring.example_class_ptr[n] + c))
        colour_of[v] = static_cast<int32_t>(c);
  }
  for (int64_t i = 0, state = 0; i < selection.own_vars; ++i) {
    const int64_t v = vars[i];
    shard->colour.push_back(colour_of[v]);
    add_to_runs(shard->own_var_runs, v, i, 1);
    add_to_runs(shard->own_state_runs, whole.state_offset[v], state, whole.card[v]);
    state += whole.card[v];
  }
  for (size_t i = static_cast<size_t>(selection.own_vars); i < vars.size(); ++i)
    shard->halo_degree.push_back(static_cast<int32_t>(graph.degree(vars[i])));
  for (int64_t v : vars) shard->global_var.push_back(whole.first_var + v);
  for (int64_t a : factors) shard->global_factor.push_back(whole.first_factor + a);

  // Each slot of a held factor: an own variable's goes to every other shard in the factor, a
  // halo variable's comes from its shard. Local slots follow the held factors in their order.
  std::vector<NeighbourLists> lists(static_cast<size_t>(partition.shards));
  std::vector<int32_t> others;
  int64_t local_slot = 0, local_entry = 0;
  shard->example_message_entries = graph.num_message_entries();
  for (int64_t a : factors) {
    others.clear();
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k)
      if (shard_of[whole.factor_vars[k]] != index) others.push_back(shard_of[whole.factor_vars[k]]);
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
    for (int64_t k = whole.factor_var_ptr[a]; k < whole.factor_var_ptr[a + 1]; ++k) {
      const int64_t v = whole.factor_vars[k];
      const SlotKey key{colour_of[v], whole.first_slot + k, static_cast<LocalIndex>(local_slot++)};
      const int64_t entries = graph.message_offset(k + 1) - graph.message_offset(k);
      add_to_runs(shard_of[v] == index ? shard->own_message_runs : shard->halo_message_runs,
                  graph.message_offset(k), local_entry, entries);
      local_entry += entries;
      if (shard_of[v] != index) {
        lists[shard_of[v]].recv.push_back(key);
        lists[shard_of[v]].recv_vars.push_back(v);
        continue;
      }
      for (int32_t r : others) {
        lists[r].send.push_back(key);
        lists[r].send_vars.push_back(v);
      }
    }
  }
  for (int r = 0; r < partition.shards; ++r) {
    NeighbourLists& l = lists[r];
    if (l.send.empty() && l.recv.empty()) continue;
    ShardNeighbour neighbour;
    neighbour.rank = first_rank + r;
    group_by_class(l.send, shard->colours, neighbour.send_class_ptr, neighbour.send_slots);
    group_by_class(l.recv, shard->colours, neighbour.recv_class_ptr, neighbour.recv_slots);
    neighbour.send_vars = unique_local(l.send_vars, local_of);
    neighbour.recv_vars = unique_local(l.recv_vars, local_of);
    shard->neighbours.push_back(std::move(neighbour));
  }
  selection.shard = std::move(shard);
  return selection;
}

}  // namespace pdsp
