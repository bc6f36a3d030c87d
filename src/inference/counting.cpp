#include "pdsp/inference/counting.hpp"

#include <algorithm>
#include <sstream>

#include "pdsp/inference/tree_reweighted.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {

RegionNumbers::RegionNumbers(std::vector<double> values)
    : size_(static_cast<int64_t>(values.size())) {
  const bool all_equal = !values.empty() && std::all_of(values.begin(), values.end(),
                                                        [&](double x) { return x == values[0]; });
  if (all_equal)
    shared_ = values[0];
  else
    values_ = std::move(values);
}

const double* RegionNumbers::range(int64_t first, int64_t last, ScratchVector& lane) const {
  if (!values_.empty()) return values_.data() + first;
  std::fill(lane.begin(), lane.begin() + (last - first), shared_);
  return lane.data();
}

CountingMode parse_counting_mode(const std::string& text) {
  const std::optional<CountingMode> mode = counting_mode_named(text);
  if (!mode) throw InputError("--counting: '" + text + "' is not one of " + kCountingModeNames);
  return *mode;
}

bool is_acyclic(const Dataset& data, int64_t n) {
  const int64_t first = data.var_offset[n], vars = data.var_offset[n + 1] - first;
  std::vector<int64_t> parent(static_cast<size_t>(vars));
  for (int64_t v = 0; v < vars; ++v) parent[v] = v;
  const auto root = [&](int64_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  int64_t components = vars, edges = 0;
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a) {
    edges += data.arity(a);
    const int64_t first_root = root(data.factor_vars[data.factor_var_ptr[a]] - first);
    for (int64_t k = data.factor_var_ptr[a] + 1; k < data.factor_var_ptr[a + 1]; ++k) {
      const int64_t other = root(data.factor_vars[k] - first);
      if (other != first_root) {
        parent[other] = first_root;
        --components;
      }
    }
  }
  const int64_t factors = data.factor_offset[n + 1] - data.factor_offset[n];
  return edges == vars + factors - components;
}

namespace {

// Whether example n has Bethe's numbers: c_a = 1 on its factors, c_v = 1 - degree on its
// variables.
bool has_bethe_numbers(const CountingNumbers& c, const Dataset& data, const FactorGraph& graph,
                       int64_t n) {
  for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v)
    if (c.var[v] != 1.0 - static_cast<double>(graph.degree(v))) return false;
  for (int64_t a = data.factor_offset[n]; a < data.factor_offset[n + 1]; ++a)
    if (c.factor[a] != 1.0) return false;
  return true;
}

}  // namespace

CountingNumbers make_counting_numbers(const Dataset& data, const FactorGraph& graph,
                                      CountingMode mode, const std::string& source,
                                      double epsilon) {
  if (mode == CountingMode::File && !data.has_counting())
    throw InputError(source + ": --counting file needs /vars/counting and /factors/counting");
  if (mode == CountingMode::Auto && data.has_counting()) mode = CountingMode::File;

  CountingNumbers c;
  c.mode = mode;
  const int64_t vars = data.num_vars();
  // A shard's halo variables have only some of their factors here: their numbers, which no
  // update of this shard reads but which decide the kernels, and the cycles are the whole
  // example's.
  const ExampleShard* shard = data.shard.get();
  const auto degree = [&](int64_t v) {
    return shard && v >= data.owned_vars() ? shard->halo_degree[v - data.owned_vars()]
                                           : graph.degree(v);
  };
  const auto bethe = [&](int64_t v) { return 1.0 - static_cast<double>(degree(v)); };
  std::vector<bool> acyclic(static_cast<size_t>(data.num_examples()));
  for (int64_t n = 0; n < data.num_examples(); ++n)
    acyclic[n] = shard ? shard->example_acyclic : is_acyclic(data, n);
  switch (mode) {
    case CountingMode::File:
      c.var = RegionNumbers(data.var_counting);
      c.factor = RegionNumbers(data.factor_counting);
      break;
    case CountingMode::Bethe: {
      std::vector<double> var(static_cast<size_t>(vars));
      for (int64_t v = 0; v < vars; ++v) var[v] = bethe(v);
      c.var = RegionNumbers(std::move(var));
      c.factor = RegionNumbers(data.num_factors(), 1.0);
      break;
    }
    case CountingMode::TreeReweighted: {
      // rho needs the whole example's graph, which a shard does not hold.
      if (shard)
        throw InputError(source + ": --counting trw needs whole examples, and example " +
                         std::to_string(shard->example) +
                         " is split across ranks (--shards 1 keeps examples whole)");
      std::vector<double> var(static_cast<size_t>(vars), 1.0);
      std::vector<double> factor(static_cast<size_t>(data.num_factors()));
      // Examples draw their trees apart (about 40 ms for a 3,000-pixel grid); the first error
      // in file order is the one reported, whatever the threads' order.
      std::vector<std::string> errors(static_cast<size_t>(data.num_examples()));
#pragma omp parallel for schedule(dynamic)
      for (int64_t n = 0; n < data.num_examples(); ++n) {
        try {
          const std::vector<double> rho = edge_appearance(data, n, source);
          std::copy(rho.begin(), rho.end(), factor.begin() + data.factor_offset[n]);
        } catch (const InputError& e) {
          errors[n] = e.what();
        }
      }
      for (const std::string& error : errors)
        if (!error.empty()) throw InputError(error);
      for (int64_t v = 0; v < vars; ++v)
        for (int64_t i = graph.var_slot_ptr[v]; i < graph.var_slot_ptr[v + 1]; ++i)
          var[v] -= factor[graph.factor_of(graph.var_slots[i])];
      c.var = RegionNumbers(std::move(var));
      c.factor = RegionNumbers(std::move(factor));
      break;
    }
    case CountingMode::Auto: {
      // Bethe numbers where they are exact (examples without a cycle) and allowed (eps > 0);
      // uniform ones elsewhere. Decided per example, so the same on any rank count.
      // A shard decides per variable: it may hold several examples split as one.
      std::vector<double> var(static_cast<size_t>(vars), 1.0);
      if (epsilon > 0 && shard) {
        for (int64_t v = 0; v < vars; ++v)
          if (shard->var_acyclic[v]) var[v] = bethe(v);
      } else if (epsilon > 0) {
        for (int64_t n = 0; n < data.num_examples(); ++n)
          if (acyclic[n])
            for (int64_t v = data.var_offset[n]; v < data.var_offset[n + 1]; ++v) var[v] = bethe(v);
      }
      c.var = RegionNumbers(std::move(var));
      c.factor = RegionNumbers(data.num_factors(), 1.0);
      break;
    }
    default:
      c.var = RegionNumbers(vars, 1.0);
      c.factor = RegionNumbers(data.num_factors(), 1.0);
  }
  c.exact.assign(static_cast<size_t>(data.num_examples()), 0);
  for (int64_t n = 0; n < data.num_examples(); ++n)
    c.exact[n] = acyclic[n] && has_bethe_numbers(c, data, graph, n) ? 1 : 0;
  c.block.resize(static_cast<size_t>(vars));
  for (int64_t v = 0; v < vars; ++v) {
    double total = c.var[v];
    for (int64_t i = graph.var_slot_ptr[v]; i < graph.var_slot_ptr[v + 1]; ++i)
      total += c.factor[graph.factor_of(graph.var_slots[i])];
    // The message update divides by chat_v: it must be positive (design.md §3); a variable in
    // no factor has no message to update, and
    // a halo variable is updated by the shard that owns it.
    if (!(total > 0.0) && graph.degree(v) > 0 && v < data.owned_vars()) {
      std::ostringstream message;
      message << source << ": /vars/counting[" << data.file_var(v)
              << "]: c_v + sum of c_a = " << total << " must be > 0 for the message update";
      throw InputError(message.str());
    }
    c.block[v] = total;
  }
  return c;
}

}  // namespace pdsp
