#include "pdsp/inference/binary_pairwise.hpp"

#include <algorithm>

#include "pdsp/inference/shared_tables.hpp"
#include "pdsp/inference/vector_math.hpp"

namespace pdsp {
namespace {

// The binary kernels' message state: one number per slot, in the precision they were built for.
template <class Message>
const Message* messages_of(const MessageState& state) {
  return std::get<std::vector<Message>>(state).data();
}
template <class Message>
Message* messages_of(MessageState& state) {
  return std::get<std::vector<Message>>(state).data();
}

}  // namespace

bool binary_pairwise_kernels_apply(const Dataset& data, const CountingNumbers& counting,
                                   double epsilon) {
  const auto binary = [](int32_t card) { return card == 2; };
  const auto positive = [](double c) { return c > 0; };
  const auto zero = [](double c) { return c == 0; };
  if (!(epsilon > 0) || !std::all_of(data.card.begin(), data.card.end(), binary)) return false;
  for (int64_t a = 0; a < data.num_factors(); ++a)
    if (data.arity(a) != 2) return false;
  return !counting.factor.any_of([&](double c) { return !positive(c); }) &&
         !counting.var.any_of(zero);
}

template <class Message>
BinaryPairwiseKernels<Message>::BinaryPairwiseKernels(const Dataset& data, const FactorGraph& graph,
                                                      const CountingNumbers& counting,
                                                      double epsilon, SharedTableReads reads)
    : factor_vars_(data.factor_vars.data()),
      graph_(graph),
      counting_(counting),
      epsilon_(epsilon),
      states_(data.num_states()) {
  if (reads == SharedTableReads::Own) return;
  const SharedPairwiseTables shared(data, counting);
  if (shared.empty()) return;
  table_factor_.resize(static_cast<size_t>(data.num_factors()));
  for (int64_t a = 0; a < data.num_factors(); ++a)
    table_factor_[a] = static_cast<LocalIndex>(shared.representative(a));
}

template <class Message>
MessageState BinaryPairwiseKernels<Message>::make_message_state() const {
  return std::vector<Message>(static_cast<size_t>(graph_.num_slots()), Message{0});
}

template <class Message>
void BinaryPairwiseKernels<Message>::export_messages(const MessageState& state,
                                                     double* arena) const {
  const Message* h = messages_of<Message>(state);
  for (int64_t e = 0; e < graph_.num_slots(); ++e) {
    arena[2 * e] = -double{h[e]};
    arena[2 * e + 1] = h[e];
  }
}

template <class Message>
void BinaryPairwiseKernels<Message>::pack_slots(std::span<const LocalIndex> slots,
                                                const MessageState& state,
                                                std::vector<double>& out) const {
  const Message* h = messages_of<Message>(state);
  for (LocalIndex e : slots) {
    out.push_back(-double{h[e]});
    out.push_back(h[e]);
  }
}

template <class Message>
const double* BinaryPairwiseKernels<Message>::unpack_slots(std::span<const LocalIndex> slots,
                                                           const double* in,
                                                           MessageState& state) const {
  Message* h = messages_of<Message>(state);
  for (LocalIndex e : slots) {
    h[e] = static_cast<Message>(0.5 * (in[1] - in[0]));
    in += 2;
  }
  return in;
}

template <class Message>
void BinaryPairwiseKernels<Message>::import_messages(const double* arena,
                                                     MessageState& state) const {
  Message* h = messages_of<Message>(state);
  for (int64_t e = 0; e < graph_.num_slots(); ++e)
    h[e] = static_cast<Message>(0.5 * (arena[2 * e + 1] - arena[2 * e]));
}

template <class Message>
double BinaryPairwiseKernels<Message>::update_variables(std::span<const LocalIndex> vars,
                                                        const double* potential,
                                                        MessageState& state, Workspace& w) const {
  Message* lambda = messages_of<Message>(state);
  double* lane_a = w.lane_a.data();
  double* lane_b = w.lane_b.data();
  double* lane_c = w.lane_c.data();
  double* lane_d = w.lane_d.data();
  const double* table = potential + states_;
  // c_a, read per factor only when they differ (uniform and Bethe counting share one value).
  const double* shared = counting_.factor.shared();
  const RegionNumbers& factor_counting = counting_.factor;
  const auto c_factor = [shared, &factor_counting](int64_t e) {
    return shared != nullptr ? *shared : factor_counting[e >> 1];
  };
  // Gather: per message block, tau_a A, tau_a B, the offset u(1,0) - u(0,0), and tau_a.
  int64_t lanes = 0;
  for (int64_t v : vars)
    for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i, ++lanes) {
      const int64_t e = graph_.var_slots[i];
      const double* u = table + 4 * table_factor(e >> 1);
      // Table entry t = 2 t_first + t_second; (s, t) below are v's and the partner's states.
      const bool first = (e & 1) == 0;
      const double u00 = u[0];
      const double u01 = first ? u[1] : u[2];
      const double u10 = first ? u[2] : u[1];
      const double u11 = u[3];
      const double d = 2.0 * lambda[e ^ 1];
      lane_a[lanes] = u11 - u10 + d;
      lane_b[lanes] = u01 - u00 + d;
      lane_c[lanes] = u10 - u00;
      lane_d[lanes] = epsilon_ * c_factor(e);
    }
  // Harmless lanes (Dmu = 0) up to a whole number of SIMD registers, where the workspace has
  // room: the loop's scalar remainder would call the scalar exp and log, which took a third of
  // yeast's sweep (13 message blocks per variable, one register of 8 and 5 scalar lanes).
  const int64_t padded = std::min(round_up_to_vector(lanes), static_cast<int64_t>(w.lane_a.size()));
  for (int64_t j = lanes; j < padded; ++j) {
    lane_a[j] = lane_b[j] = lane_c[j] = 0.0;
    lane_d[j] = 1.0;
  }
  // Dmu = (u(1,0) - u(0,0)) + tau [sp(A) - sp(B)], sp(z) = max(z, 0) + log(1 + exp(-|z|)). At
  // low temperatures |z| passes 708, and the floor keeps those exps out of libmvec's scalar
  // fallback (a fifth of an eps = 0 run's time on denoising) without changing 1 + exp(-|z|).
  const double lowest = exp_floor();
#pragma omp simd
  for (int64_t j = 0; j < padded; ++j) {
    const double inverse_tau = 1.0 / lane_d[j];
    const double a = lane_a[j] * inverse_tau;
    const double b = lane_b[j] * inverse_tau;
    const double soft = std::log((1.0 + std::exp(floored(-std::abs(a), lowest))) /
                                 (1.0 + std::exp(floored(-std::abs(b), lowest))));
    lane_a[j] = lane_c[j] + lane_d[j] * (std::max(a, 0.0) - std::max(b, 0.0) + soft);
  }
  // Lemma 3 per variable: 2 h_{v->a} = (c_a / chat_v) (Du_v + sum_b Dmu_b) - Dmu_a. A change of
  // h by x changes the arena entries by x.
  double change = 0.0;
  lanes = 0;
  for (int64_t v : vars) {
    const int64_t begin = graph_.var_slot_ptr[v];
    const int64_t end = graph_.var_slot_ptr[v + 1];
    double total = potential[2 * v + 1] - potential[2 * v];
    for (int64_t i = 0; i < end - begin; ++i) total += lane_a[lanes + i];
    const double scale = total / counting_.block[v];
    for (int64_t i = begin; i < end; ++i, ++lanes) {
      const int64_t e = graph_.var_slots[i];
      const auto half = static_cast<Message>(0.5 * (c_factor(e) * scale - lane_a[lanes]));
      change = std::max(change, std::abs(double{half} - double{lambda[e]}));
      lambda[e] = half;
    }
  }
  return change;
}

namespace {

// The four scores x(t) = u_a(t) + lambda_{first->a}(t_first) + lambda_{second->a}(t_second) of
// the factor whose table is `u` and whose messages are h = (h_first, h_second), as
// y(t) = (x(t) - top) / tau; returns top = max_t x(t).
template <class Message>
inline double scaled_pair_scores(const double* u, const Message* h, double tau, double& y0,
                                 double& y1, double& y2, double& y3) {
  const double x0 = u[0] - h[0] - h[1];
  const double x1 = u[1] - h[0] + h[1];
  const double x2 = u[2] + h[0] - h[1];
  const double x3 = u[3] + h[0] + h[1];
  const double top = std::max(std::max(x0, x1), std::max(x2, x3));
  // One division per factor, not four: the divider is the slowest unit of the factor loops
  // (beliefs and objective 15-20% faster).
  const double inverse_tau = 1.0 / tau;
  y0 = (x0 - top) * inverse_tau;
  y1 = (x1 - top) * inverse_tau;
  y2 = (x2 - top) * inverse_tau;
  y3 = (x3 - top) * inverse_tau;
  return top;
}

}  // namespace

template <class Message>
double BinaryPairwiseKernels<Message>::factor_objective(int64_t first, int64_t last,
                                                        const double* potential,
                                                        const MessageState& state,
                                                        Workspace& w) const {
  const Message* lambda = messages_of<Message>(state);
  const double* table = potential + states_;
  const double* counting = counting_.factor.range(first, last, w.lane_a);
  const double epsilon = epsilon_;
  double objective = 0.0;
  const double lowest = exp_floor();  // one y is 0: the sum is at least 1
#pragma omp simd reduction(+ : objective)
  for (int64_t a = first; a < last; ++a) {
    const double tau = epsilon * counting[a - first];
    double y0, y1, y2, y3;
    const double top = scaled_pair_scores(table + 4 * a, lambda + 2 * a, tau, y0, y1, y2, y3);
    const double sum = std::exp(floored(y0, lowest)) + std::exp(floored(y1, lowest)) +
                       std::exp(floored(y2, lowest)) + std::exp(floored(y3, lowest));
    objective += top + tau * std::log(sum);
  }
  return objective;
}

template <class Message>
BeliefTerms BinaryPairwiseKernels<Message>::factor_beliefs(int64_t first, int64_t last,
                                                           const double* potential,
                                                           const MessageState& state,
                                                           double* belief, Workspace& w) const {
  const Message* lambda = messages_of<Message>(state);
  const double* table = potential + states_;
  const double* counting = counting_.factor.range(first, last, w.lane_a);
  const double epsilon = epsilon_;
  double* b = belief + states_;
  double objective = 0.0;
  double dual = 0.0;
#pragma omp simd reduction(+ : objective, dual)
  for (int64_t a = first; a < last; ++a) {
    const double tau = epsilon * counting[a - first];
    double y0, y1, y2, y3;
    const double top = scaled_pair_scores(table + 4 * a, lambda + 2 * a, tau, y0, y1, y2, y3);
    const double e0 = std::exp(y0), e1 = std::exp(y1), e2 = std::exp(y2), e3 = std::exp(y3);
    const double sum = e0 + e1 + e2 + e3;
    const double log_sum = std::log(sum);
    const double inverse = 1.0 / sum;
    const double b0 = e0 * inverse, b1 = e1 * inverse, b2 = e2 * inverse, b3 = e3 * inverse;
    b[4 * a] = b0;
    b[4 * a + 1] = b1;
    b[4 * a + 2] = b2;
    b[4 * a + 3] = b3;
    objective += top + tau * log_sum;
    // tau H(b) = tau (log sum - sum_t b(t) y_t)
    dual += tau * (log_sum - (b0 * y0 + b1 * y1 + b2 * y2 + b3 * y3));
  }
  // Each variable's belief against the factor belief summed over its partner's state (the
  // variable pass ran first), while this chunk's factor beliefs are still in the cache. Both
  // sides sum to one over the two states, so state 1 alone gives the gap.
  double violation = 0.0;
  for (int64_t a = first; a < last; ++a) {
    const double* f = b + 4 * a;
    const double gap_first = std::abs(f[2] + f[3] - belief[2 * factor_vars_[2 * a] + 1]);
    const double gap_second = std::abs(f[1] + f[3] - belief[2 * factor_vars_[2 * a + 1] + 1]);
    violation = std::max(violation, std::max(gap_first, gap_second));
  }
  return {objective, dual, violation};
}

template <class Message>
typename BinaryPairwiseKernels<Message>::VariableLanes
BinaryPairwiseKernels<Message>::variable_lanes(int64_t first, int64_t last, const double* potential,
                                               const Message* lambda, Workspace& w) const {
  for (int64_t v = first; v < last; ++v) {
    double sum = 0.0;  // sum_a h_{v->a}: lambda_{v->a} = (-h, h)
    for (int64_t i = graph_.var_slot_ptr[v]; i < graph_.var_slot_ptr[v + 1]; ++i)
      sum += lambda[graph_.var_slots[i]];
    w.lane_a[v - first] = potential[2 * v] + sum;
    w.lane_b[v - first] = potential[2 * v + 1] - sum;
  }
  return {w.lane_a.data(), w.lane_b.data(), counting_.var.range(first, last, w.lane_c)};
}

template <class Message>
double BinaryPairwiseKernels<Message>::variable_objective(int64_t first, int64_t last,
                                                          const double* potential,
                                                          const MessageState& state,
                                                          Workspace& w) const {
  const auto [x0, x1, counting] =
      variable_lanes(first, last, potential, messages_of<Message>(state), w);
  const double epsilon = epsilon_;
  double objective = 0.0;
  // smax_tau(x0, x1) = (the score with the larger x / tau) + tau log(1 + exp(-|x1 - x0| / |tau|))
#pragma omp simd reduction(+ : objective)
  for (int64_t j = 0; j < last - first; ++j) {
    const double tau = epsilon * counting[j];
    const double z = (x1[j] - x0[j]) / tau;
    objective += (z >= 0 ? x1[j] : x0[j]) + tau * std::log1p(std::exp(-std::abs(z)));
  }
  return objective;
}

template <class Message>
BeliefTerms BinaryPairwiseKernels<Message>::variable_beliefs(int64_t first, int64_t last,
                                                             const double* potential,
                                                             const MessageState& state,
                                                             const double* loss, double* belief,
                                                             Workspace& w) const {
  const auto [x0, x1, counting] =
      variable_lanes(first, last, potential, messages_of<Message>(state), w);
  const double epsilon = epsilon_;
  double objective = 0.0;
  double dual = 0.0;
#pragma omp simd reduction(+ : objective, dual)
  for (int64_t j = 0; j < last - first; ++j) {
    const int64_t v = first + j;
    const double tau = epsilon * counting[j];
    const double z = (x1[j] - x0[j]) / tau;
    const double other = std::exp(-std::abs(z));  // odds of the less likely state
    const double log_sum = std::log1p(other);
    const double b_top = 1.0 / (1.0 + other);
    const double b_other = other * b_top;
    belief[2 * v] = z >= 0 ? b_other : b_top;
    belief[2 * v + 1] = z >= 0 ? b_top : b_other;
    objective += (z >= 0 ? x1[j] : x0[j]) + tau * log_sum;
    dual += tau * (log_sum + b_other * std::abs(z));  // tau H(b_v)
  }
  if (loss != nullptr)
    for (int64_t v = first; v < last; ++v)
      dual += belief[2 * v] * loss[2 * v] + belief[2 * v + 1] * loss[2 * v + 1];
  return {objective, dual, 0.0};
}

template class BinaryPairwiseKernels<double>;
template class BinaryPairwiseKernels<float>;

}  // namespace pdsp
