#include "pdsp/inference/message_passing.hpp"

#include <algorithm>
#include <cmath>

#include "pdsp/inference/smax.hpp"
#include "pdsp/inference/table_ops.hpp"

namespace pdsp {
namespace {

// The general kernels' message state is the arena itself.
const double* arena_of(const MessageState& state) {
  return std::get<std::vector<double>>(state).data();
}

}  // namespace

MessagePassing::MessagePassing(const Dataset& data, const FactorGraph& graph,
                               const CountingNumbers& counting, double epsilon)
    : data_(data), graph_(graph), counting_(counting), shared_(data, counting) {
  set_epsilon(epsilon);
}

void MessagePassing::set_epsilon(double epsilon) {
  epsilon_ = epsilon;
  has_kinks_ = epsilon_ > 0.0 && counting_.var.any_of([](double c) { return c == 0.0; });
  if (shared_potential_ != nullptr) shared_.rebuild(shared_potential_, epsilon_);
}

void MessagePassing::set_potentials(const double* potential) {
  if (shared_.empty()) return;
  shared_potential_ = potential;
  shared_.rebuild(potential, epsilon_);
}

void MessagePassing::use_own_tables() {
  if (shared_.empty()) return;
  shared_potential_ = nullptr;
  shared_.rebuild(nullptr, epsilon_);
}

void MessagePassing::factor_scores(int64_t a, const double* potential, const double* lambda,
                                   int64_t skip, double* out) const {
  const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
  const double* u = table_of(a, potential);
  std::copy(u, u + size, out);
  for (int64_t e = data_.factor_var_ptr[a]; e < data_.factor_var_ptr[a + 1]; ++e) {
    if (e == skip) continue;
    add_along_slot(out, size, data_.card[data_.factor_vars[e]], graph_.stride_of(e),
                   lambda + graph_.message_offset(e));
  }
}

void MessagePassing::var_scores(int64_t v, const double* potential, const double* lambda,
                                double* out) const {
  const int64_t card = data_.card[v];
  const double* u = potential + data_.state_offset[v];
  std::copy(u, u + card, out);
  for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i) {
    const double* message = lambda + graph_.message_offset(graph_.var_slots[i]);
    for (int64_t s = 0; s < card; ++s) out[s] -= message[s];
  }
}

double MessagePassing::update_variable(int64_t v, const double* potential, double* lambda,
                                       Workspace& w) const {
  const int64_t card = data_.card[v];
  const int64_t first = graph_.var_slot_ptr[v];
  const int64_t degree = graph_.var_slot_ptr[v + 1] - first;
  if (degree == 0) return 0.0;

  // mu_{a->v}(s) for every factor a of v, and total(s) = u_v(s) + sum_a mu_{a->v}(s).
  double* total = w.state.data();
  const double* u = potential + data_.state_offset[v];
  std::copy(u, u + card, total);
  for (int64_t i = 0; i < degree; ++i) {
    const int64_t e = graph_.var_slots[first + i];
    const int64_t a = graph_.factor_of(e);
    double* mu = w.mu.data() + i * card;
    if (data_.arity(a) == 2) {
      const int64_t first_slot = data_.factor_var_ptr[a];
      const int64_t other = e == first_slot ? first_slot + 1 : first_slot;
      if (const SharedTable* table = shared_table(a, potential))
        table->message(e == first_slot, lambda + graph_.message_offset(other), mu, w.sums.data());
      else
        smax_pairwise(table_of(a, potential), card, data_.card[data_.factor_vars[other]],
                      e == first_slot, lambda + graph_.message_offset(other), tau_factor(a), mu,
                      w.sums.data());
    } else {
      const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
      factor_scores(a, potential, lambda, e, w.table.data());
      smax_along_slot(w.table.data(), size, card, graph_.stride_of(e), tau_factor(a), mu,
                      w.sums.data());
    }
    for (int64_t s = 0; s < card; ++s) total[s] += mu[s];
  }

  // lambda_{v->a}(s) = (c_a / chat_v) total(s) - mu_{a->v}(s), then centred over s.
  double change = 0.0;
  for (int64_t i = 0; i < degree; ++i) {
    const int64_t e = graph_.var_slots[first + i];
    const double weight = counting_.factor[graph_.factor_of(e)] / counting_.block[v];
    const double* mu = w.mu.data() + i * card;
    double* message = lambda + graph_.message_offset(e);
    // Both loops as SIMD reductions where the states fill a vector (vector_math.hpp):
    // sequential, each state waited on the last one's add or max (on OCR a tenth of a sweep).
    const double mean = sum_over(0, card, [&](int64_t s) { return weight * total[s] - mu[s]; }) /
                        static_cast<double>(card);
    change = max_over(0, card, change, [&](int64_t s) {
      const double updated = weight * total[s] - mu[s] - mean;
      const double moved = std::abs(updated - message[s]);
      message[s] = updated;
      return moved;
    });
  }
  return change;
}

double MessagePassing::sweep_example(int64_t n, const double* potential, double* lambda,
                                     Workspace& w) const {
  double change = 0.0;
  for (int64_t v = data_.var_offset[n]; v < data_.var_offset[n + 1]; ++v)
    change = std::max(change, update_variable(v, potential, lambda, w));
  return change;
}

void MessagePassing::resolve_kinks(std::span<const LocalIndex> vars, const double* potential,
                                   MessageState& lambda, Workspace& w) const {
  if (!has_kinks_) return;
  double* arena = std::get<std::vector<double>>(lambda).data();
  for (int64_t v : vars)
    if (counting_.var[v] == 0.0) update_variable(v, potential, arena, w);
}

MessageState MessagePassing::make_message_state() const {
  return std::vector<double>(static_cast<size_t>(graph_.num_message_entries()), 0.0);
}

void MessagePassing::export_messages(const MessageState& state, double* arena) const {
  const std::vector<double>& own = std::get<std::vector<double>>(state);
  std::copy(own.begin(), own.end(), arena);
}

void MessagePassing::import_messages(const double* arena, MessageState& state) const {
  std::vector<double>& own = std::get<std::vector<double>>(state);
  std::copy(arena, arena + own.size(), own.begin());
}

void MessagePassing::pack_slots(std::span<const LocalIndex> slots, const MessageState& state,
                                std::vector<double>& out) const {
  const std::vector<double>& arena = std::get<std::vector<double>>(state);
  for (LocalIndex e : slots)
    out.insert(out.end(), arena.begin() + graph_.message_offset(e),
               arena.begin() + graph_.message_offset(e + 1));
}

const double* MessagePassing::unpack_slots(std::span<const LocalIndex> slots, const double* in,
                                           MessageState& state) const {
  std::vector<double>& arena = std::get<std::vector<double>>(state);
  for (LocalIndex e : slots) {
    const int64_t size = graph_.message_offset(e + 1) - graph_.message_offset(e);
    std::copy(in, in + size, arena.begin() + graph_.message_offset(e));
    in += size;
  }
  return in;
}

double MessagePassing::update_variables(std::span<const LocalIndex> vars, const double* potential,
                                        MessageState& lambda, Workspace& w) const {
  double* arena = std::get<std::vector<double>>(lambda).data();
  double change = 0.0;
  for (int64_t v : vars) change = std::max(change, update_variable(v, potential, arena, w));
  return change;
}

double MessagePassing::factor_objective(int64_t first, int64_t last, const double* potential,
                                        const MessageState& lambda, Workspace& w) const {
  return factor_objective(first, last, potential, arena_of(lambda), w);
}

double MessagePassing::variable_objective(int64_t first, int64_t last, const double* potential,
                                          const MessageState& lambda, Workspace& w) const {
  return variable_objective(first, last, potential, arena_of(lambda), w);
}

BeliefTerms MessagePassing::factor_beliefs(int64_t first, int64_t last, const double* potential,
                                           const MessageState& lambda, double* belief,
                                           Workspace& w) const {
  return factor_beliefs(first, last, potential, arena_of(lambda), belief, w);
}

BeliefTerms MessagePassing::variable_beliefs(int64_t first, int64_t last, const double* potential,
                                             const MessageState& lambda, const double* loss,
                                             double* belief, Workspace& w) const {
  return variable_beliefs(first, last, potential, arena_of(lambda), loss, belief, w);
}

double MessagePassing::factor_objective(int64_t first, int64_t last, const double* potential,
                                        const double* lambda, Workspace& w) const {
  double objective = 0.0;
  for (int64_t a = first; a < last; ++a) {
    if (const SharedTable* table = shared_table(a, potential)) {
      const int64_t slot = data_.factor_var_ptr[a];
      objective += table->objective(lambda + graph_.message_offset(slot),
                                    lambda + graph_.message_offset(slot + 1), w.state.data(),
                                    w.sums.data(), w.table.data());
      continue;
    }
    factor_scores(a, potential, lambda, -1, w.table.data());
    objective +=
        smax(w.table.data(), data_.table_offset[a + 1] - data_.table_offset[a], tau_factor(a));
  }
  return objective;
}

double MessagePassing::variable_objective(int64_t first, int64_t last, const double* potential,
                                          const double* lambda, Workspace& w) const {
  double objective = 0.0;
  for (int64_t v = first; v < last; ++v) {
    var_scores(v, potential, lambda, w.state.data());
    objective += smax(w.state.data(), data_.card[v], tau_var(v));
  }
  return objective;
}

void MessagePassing::var_belief(int64_t v, const double* scores, const double* potential,
                                const double* lambda, double* out, Workspace& w) const {
  const int64_t card = data_.card[v];
  const double tau = tau_var(v);
  const int64_t first = graph_.var_slot_ptr[v];
  const int64_t degree = graph_.var_slot_ptr[v + 1] - first;
  soft_argmax(scores, card, tau, out);
  const bool all_tie = std::all_of(out, out + card, [&](double b) { return b == out[0]; });
  if (tau != 0.0 || epsilon_ == 0.0 || degree == 0 || !all_tie) return;
  // c_v = 0 with eps > 0 at its block optimum: every state ties and the soft-argmax is 0/0, so
  // the belief is the average of the neighbouring factor beliefs marginalised to v (design.md
  // §4). Away from the optimum the arg-max above is the exact gradient.
  std::fill(out, out + card, 0.0);
  for (int64_t i = 0; i < degree; ++i) {
    const int64_t e = graph_.var_slots[first + i];
    factor_marginal(e, potential, lambda, w, w.state.data());
    for (int64_t s = 0; s < card; ++s) out[s] += w.state[s] / static_cast<double>(degree);
  }
}

// The variables' beliefs come first (plan_evaluation), so a factor's marginals are compared
// with them here and need not be kept until a variable pass.
void MessagePassing::factor_marginal(int64_t e, const double* potential, const double* lambda,
                                     Workspace& w, double* out) const {
  const int64_t a = graph_.factor_of(e);
  const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
  factor_scores(a, potential, lambda, -1, w.table.data());
  soft_argmax(w.table.data(), size, tau_factor(a), w.table.data());
  sum_along_slot(w.table.data(), size, data_.card[data_.factor_vars[e]], graph_.stride_of(e), out);
}

double MessagePassing::marginal_gap(int64_t e, const double* marginal, const double* belief) const {
  const double* b = belief + data_.state_offset[data_.factor_vars[e]];
  double gap = 0.0;
  for (int64_t s = 0; s < data_.card[data_.factor_vars[e]]; ++s)
    gap = std::max(gap, std::abs(marginal[s] - b[s]));
  return gap;
}

BeliefTerms MessagePassing::factor_beliefs(int64_t first, int64_t last, const double* potential,
                                           const double* lambda, double* belief,
                                           Workspace& w) const {
  BeliefTerms terms;
  for (int64_t a = first; a < last; ++a) {
    const int64_t size = data_.table_offset[a + 1] - data_.table_offset[a];
    const int64_t slot = data_.factor_var_ptr[a];
    if (const SharedTable* table = shared_table(a, potential)) {
      double* marginals = w.mu.data();
      double entropy_but_table = 0.0;
      terms.objective += table->beliefs(lambda + graph_.message_offset(slot),
                                        lambda + graph_.message_offset(slot + 1), marginals,
                                        shared_.folded_beliefs(a), &entropy_but_table,
                                        w.state.data(), w.sums.data(), w.table.data());
      terms.dual += entropy_but_table;
      terms.violation = std::max({terms.violation, marginal_gap(slot, marginals, belief),
                                  marginal_gap(slot + 1, marginals + table->rows, belief)});
      continue;
    }
    double* b = belief + data_.num_states() + data_.table_offset[a];
    factor_scores(a, potential, lambda, -1, w.table.data());
    terms.objective += smax(w.table.data(), size, tau_factor(a));
    soft_argmax(w.table.data(), size, tau_factor(a), b);
    terms.dual += tau_factor(a) * entropy(b, size);
    for (int64_t e = slot; e < data_.factor_var_ptr[a + 1]; ++e) {
      sum_along_slot(b, size, data_.card[data_.factor_vars[e]], graph_.stride_of(e),
                     w.state.data());
      terms.violation = std::max(terms.violation, marginal_gap(e, w.state.data(), belief));
    }
  }
  return terms;
}

BeliefTerms MessagePassing::variable_beliefs(int64_t first, int64_t last, const double* potential,
                                             const double* lambda, const double* loss,
                                             double* belief, Workspace& w) const {
  BeliefTerms terms;
  for (int64_t v = first; v < last; ++v) {
    const int64_t card = data_.card[v];
    double* b = belief + data_.state_offset[v];
    double* scores = w.sums.data();
    var_scores(v, potential, lambda, scores);
    var_belief(v, scores, potential, lambda, b, w);
    const double tau = tau_var(v);
    if (tau == 0.0) {
      terms.objective += max_of(scores, card);  // and tau H(b) = 0
    } else {
      // b(s) = exp((x(s) - smax) / tau) gives smax from the likeliest state, and tau H(b) =
      // smax - sum b x, without an exp or a log per state. A state of belief 0 (an infinite
      // score at tau < 0) adds nothing.
      const int64_t top = std::max_element(b, b + card) - b;
      const double objective = scores[top] - tau * std::log(b[top]);
      double expected = 0.0;
      for (int64_t s = 0; s < card; ++s) expected += b[s] > 0.0 ? b[s] * scores[s] : 0.0;
      terms.objective += objective;
      terms.dual += objective - expected;
    }
    if (loss != nullptr)
      for (int64_t s = 0; s < card; ++s) terms.dual += b[s] * loss[data_.state_offset[v] + s];
  }
  return terms;
}

double MessagePassing::example_objective(int64_t n, const double* potential, const double* lambda,
                                         Workspace& w) const {
  return variable_objective(data_.var_offset[n], data_.var_offset[n + 1], potential, lambda, w) +
         factor_objective(data_.factor_offset[n], data_.factor_offset[n + 1], potential, lambda, w);
}

double MessagePassing::fold_shared_beliefs(std::span<const int64_t> examples) {
  return shared_.fold(examples);
}

void MessagePassing::unfold_beliefs(int64_t first, int64_t last, double* belief) const {
  const std::span<const uint8_t> folded = factors_with_folded_beliefs();
  if (folded.empty()) return;
  for (int64_t a = first; a < last; ++a)
    if (folded[a]) shared_.unfold(a, belief + data_.num_states() + data_.table_offset[a]);
}

void MessagePassing::add_shared_moments(std::span<double> z) const {
  shared_.add_moments(z.data());
}

bool MessagePassing::folded_beliefs_finite(int64_t first, int64_t last) const {
  const std::vector<uint8_t>& folded = shared_.folded();
  for (int64_t a = first; a < std::min<int64_t>(last, static_cast<int64_t>(folded.size())); ++a) {
    if (!folded[a]) continue;
    const double* b = shared_.folded_beliefs(a);
    const int64_t size = shared_.of(a)->folded_size();
    if (!std::all_of(b, b + size, [](double x) { return std::isfinite(x); })) return false;
  }
  return true;
}

BeliefTerms MessagePassing::example_beliefs(int64_t n, const double* potential,
                                            const double* lambda, const double* loss,
                                            double* belief, Workspace& w) const {
  BeliefTerms terms = variable_beliefs(data_.var_offset[n], data_.var_offset[n + 1], potential,
                                       lambda, loss, belief, w);
  terms.add(factor_beliefs(data_.factor_offset[n], data_.factor_offset[n + 1], potential, lambda,
                           belief, w));
  return terms;
}

}  // namespace pdsp
