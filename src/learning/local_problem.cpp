#include "pdsp/learning/local_problem.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "pdsp/data/allocation.hpp"
#include "pdsp/features/feature_index.hpp"
#include "pdsp/inference/local_polytope.hpp"
#include "pdsp/inference/smax.hpp"
#include "pdsp/learning/non_finite_report.hpp"
#include "pdsp/util/errors.hpp"
#include "pdsp/util/vector_ops.hpp"

namespace pdsp {
namespace {

EngineSettings engine_settings(const ProblemSettings& settings, double temperature) {
  EngineSettings engine;
  engine.counting = settings.counting;
  engine.epsilon = settings.epsilon;
  engine.temperature = temperature;
  engine.source = settings.source;
  return engine;
}

}  // namespace

LocalProblem::LocalProblem(const Dataset& data, const ProblemSettings& settings,
                           std::unique_ptr<const PotentialModel> model)
    : data_(data),
      settings_(settings),
      temperature_(settings.epsilon > 0 ? settings.epsilon : settings.smoothing),
      engine_(data, engine_settings(settings, temperature_), std::move(model)),
      graph_(engine_.graph()),
      counting_(engine_.counting()),
      general_(engine_.general()),
      binary_pairwise_(
          make_binary_pairwise_kernels(data, graph_, counting_, settings, temperature_)),
      kernels_(binary_pairwise_ ? binary_pairwise_.get() : &general_),
      colouring_(
          colour_variables(data, graph_,
                           sweep_along_trees(data, graph_, counting_, binary_pairwise_ == nullptr,
                                             settings.shallow_trees_along))),
      sweep_plan_(plan_sweep(colouring_, graph_)),
      evaluation_plan_(plan_evaluation(data)),
      chunk_counted_(counted_chunks()),
      // A shard exchanges after each phase, which the threads must have finished together.
      threads_inside_examples_(data.shard || share_examples_between_threads(data, graph_)),
      // A nonlinear model writes every table, so that the ground-truth score can read them.
      unwritten_factors_(kernels_ == &general_ && engine_.model().is_linear()
                             ? general_.factors_without_own_table()
                             : std::span<const uint8_t>()),
      loss_(training_loss(data, settings)),
      largest_base_(largest_magnitude(loss_)),
      lambda_(
          allocate(settings.source,
                   "the messages (" + std::to_string(graph_.num_message_entries()) + " entries)",
                   8.0 * static_cast<double>(graph_.num_message_entries()),
                   [&] { return kernels_->make_message_state(); })),
      belief_(allocate_zeroed<double>(settings.source,
                                      "the beliefs (" +
                                          std::to_string(engine_.potential_array().size()) +
                                          " states and table entries)",
                                      static_cast<int64_t>(engine_.potential_array().size()))),
      chunk_value_(
          static_cast<size_t>(std::max(sweep_plan_.num_chunks(), evaluation_plan_.num_chunks()))),
      chunk_terms_(static_cast<size_t>(evaluation_plan_.num_chunks())),
      chunk_beliefs_finite_(static_cast<size_t>(evaluation_plan_.num_chunks()), 1) {
  if (settings.epsilon == 0.0) require_max_product_counting(data, counting_, settings.source);
  if (data.shard)
    halo_ = std::make_unique<HaloExchange>(data, graph_, *kernels_, data.communicator());
  workspaces_.reserve(static_cast<size_t>(omp_get_max_threads()));
  for (int t = 0; t < omp_get_max_threads(); ++t) workspaces_.emplace_back(graph_);
  for (LocalIndex v : sweep_plan_.order) messages_per_sweep_ += graph_.degree(v);
}

bool LocalProblem::is_saddle_problem() const {
  const auto negative = [](double c) { return c < 0; };
  return settings_.epsilon > 0 &&
         (counting_.var.any_of(negative) || counting_.factor.any_of(negative));
}

std::string LocalProblem::kernel_name() const {
  const bool single = settings_.message_precision == MessagePrecision::Single;
  return std::string(binary_pairwise_ ? "binary-pairwise" : "general") +
         (single ? ", single-precision messages" : "") +
         (threads_inside_examples_ ? ", threads inside examples" : ", threads over examples");
}

std::vector<uint8_t> LocalProblem::counted_chunks() const {
  std::vector<uint8_t> counted(static_cast<size_t>(evaluation_plan_.num_chunks()), 1);
  if (!data_.shard) return counted;
  for (int64_t bundle = 0; bundle < evaluation_plan_.num_bundles(); ++bundle) {
    const int64_t first_phase = evaluation_plan_.bundle_phase_ptr[bundle];
    for (int64_t p = first_phase; p < evaluation_plan_.bundle_phase_ptr[bundle + 1]; ++p)
      for (int64_t c = evaluation_plan_.phase_ptr[p]; c < evaluation_plan_.phase_ptr[p + 1]; ++c)
        if (factors_in(p - first_phase) &&
            evaluation_plan_.chunks[c].begin >= data_.owned_factors())
          counted[c] = 0;
  }
  return counted;
}

template <class Work, class BetweenParts, class AfterPhase>
void LocalProblem::run(const WorkPlan& plan, Work&& work, BetweenParts&& between_parts,
                       AfterPhase&& after_phase) {
  const int64_t bundles = plan.num_bundles();
  if (!threads_inside_examples_) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t n = 0; n < bundles; ++n) {
      Workspace& w = workspaces_[omp_get_thread_num()];
      const int64_t first_phase = plan.bundle_phase_ptr[n];
      for (int64_t p = first_phase; p < plan.bundle_phase_ptr[n + 1]; ++p)
        for (int64_t c = plan.phase_ptr[p]; c < plan.phase_ptr[p + 1]; ++c)
          work(c, p - first_phase, w);
    }
    return;
  }
  for (int64_t n = 0; n < bundles; ++n) {
    const int64_t first_phase = plan.bundle_phase_ptr[n];
    for (int64_t p = first_phase; p < plan.bundle_phase_ptr[n + 1]; ++p) {
      const int64_t interior =
          plan.phase_interior.empty() ? plan.phase_ptr[p + 1] : plan.phase_interior[p];
#pragma omp parallel for schedule(static)
      for (int64_t c = plan.phase_ptr[p]; c < interior; ++c)
        work(c, p - first_phase, workspaces_[omp_get_thread_num()]);
      if (!plan.phase_interior.empty()) {
        between_parts(p - first_phase);
#pragma omp parallel for schedule(static)
        for (int64_t c = interior; c < plan.phase_ptr[p + 1]; ++c)
          work(c, p - first_phase, workspaces_[omp_get_thread_num()]);
      }
      after_phase(p - first_phase);
    }
  }
}

double LocalProblem::sum_of_chunks(const WorkPlan& plan) const {
  const bool evaluation = &plan == &active_evaluation_plan();
  double total = 0.0;
  for (int64_t c = 0; c < plan.num_chunks(); ++c)
    if (!evaluation || chunk_counted_[c]) total += chunk_value_[c];
  return total;
}

std::vector<double> LocalProblem::messages() const {
  std::vector<double> arena;
  save_messages(arena);
  return arena;
}

void LocalProblem::save_messages(std::vector<double>& arena) const {
  arena.resize(static_cast<size_t>(graph_.num_message_entries()));
  kernels_->export_messages(lambda_, arena.data());
}

void LocalProblem::set_messages(std::span<const double> arena) {
  kernels_->import_messages(arena.data(), lambda_);
  messages_are_kept_ = false;
  imported_finite_ = all_finite(arena.first(graph_.num_message_entries()));
}

void LocalProblem::keep_messages(MessagesKept what) {
  kept_ranges_only_ = what == MessagesKept::ForASweep && kernels_ == &general_ &&
                      !colouring_.along_tree.empty() && selected_.empty();
  if (kept_ranges_only_) {
    keep_resweep_ranges();
  } else if (std::visit([](const auto& kept) { return kept.empty(); }, kept_lambda_) &&
             graph_.num_message_entries() > 0) {
    // The first copy allocates as much as the messages themselves.
    allocate(settings_.source,
             "a copy of the messages for the step search (" +
                 std::to_string(graph_.num_message_entries()) + " entries)",
             8.0 * static_cast<double>(graph_.num_message_entries()),
             [&] { kept_lambda_ = lambda_; });
  } else {
    kept_lambda_ = lambda_;
  }
  messages_are_kept_ = true;
}

void LocalProblem::keep_resweep_ranges() {
  if (!resweep_ranges_found_) {
    resweep_ranges_found_ = true;
    int64_t entries = 0;
    for (int64_t n = 0; n < data_.num_examples(); ++n) {
      if (colouring_.along_tree[n]) continue;
      const int64_t begin = graph_.message_offset(data_.factor_var_ptr[data_.factor_offset[n]]);
      const int64_t end = graph_.message_offset(data_.factor_var_ptr[data_.factor_offset[n + 1]]);
      if (end == begin) continue;
      if (!resweep_ranges_.empty() && resweep_ranges_.back().second == begin)
        resweep_ranges_.back().second = end;
      else
        resweep_ranges_.emplace_back(begin, end);
      entries += end - begin;
    }
    allocate(settings_.source,
             "a copy of the messages for the step search (" + std::to_string(entries) + " entries)",
             8.0 * static_cast<double>(entries),
             [&] { kept_ranges_.resize(static_cast<size_t>(entries)); });
  }
  const double* arena = std::get<std::vector<double>>(lambda_).data();
  double* out = kept_ranges_.data();
  for (const auto& [begin, end] : resweep_ranges_) out = std::copy(arena + begin, arena + end, out);
}

void LocalProblem::restore_messages() {
  // The first trial of a step search finds the messages as keep_messages left them.
  if (messages_are_kept_) return;
  messages_are_kept_ = true;
  if (!kept_ranges_only_) {
    lambda_ = kept_lambda_;
    return;
  }
  double* arena = std::get<std::vector<double>>(lambda_).data();
  const double* in = kept_ranges_.data();
  for (const auto& [begin, end] : resweep_ranges_) {
    std::copy(in, in + (end - begin), arena + begin);
    in += end - begin;
  }
}

void LocalProblem::set_theta(std::span<const double> theta) {
  // The general kernels read one table for all the factors that share it (shared_tables.hpp).
  if (selected_.empty()) {
    engine_.set_theta(theta, potential_base(), largest_base_, unwritten_factors_);
    general_.set_potentials(engine_.potentials());
  } else {
    // A shared table's representative may lie in an example outside the selection.
    engine_.set_examples_theta(selected_, theta, potential_base(), largest_base_);
    general_.use_own_tables();
  }
}

void LocalProblem::set_temperature(double epsilon) {
  temperature_ = epsilon;
  general_.set_epsilon(epsilon);
  kinks_on_some_rank_.reset();  // c_v = 0 is a kink only at a positive temperature
  if (binary_pairwise_) binary_pairwise_->set_epsilon(epsilon);
}

template <class Update>
void LocalProblem::pass_over_variables(Update&& update) {
  const WorkPlan& plan = active_sweep_plan();
  const std::span<const LocalIndex> order(plan.order);
  run(
      plan,
      [&](int64_t c, int64_t, Workspace& w) {
        const WorkPlan::Chunk& chunk = plan.chunks[c];
        update(c, order.subspan(chunk.begin, chunk.end - chunk.begin), w);
      },
      [&](int64_t colour) {
        if (halo_) halo_->start_messages(colour, lambda_);
      },
      [&](int64_t colour) {
        if (halo_) halo_->finish_messages(colour, lambda_);
      });
}

double LocalProblem::sweep(int count) {
  if (count > 0) messages_are_kept_ = false;
  for (int i = 0; i < count; ++i) {
    if (halo_) halo_->count_sweep();
    pass_over_variables([&](int64_t c, std::span<const LocalIndex> vars, Workspace& w) {
      chunk_value_[c] = kernels_->update_variables(vars, engine_.potentials(), lambda_, w);
    });
  }
  const WorkPlan& plan = active_sweep_plan();
  const auto last = chunk_value_.begin() + plan.num_chunks();
  return plan.chunks.empty() ? 0.0 : *std::max_element(chunk_value_.begin(), last);
}

void LocalProblem::resolve_kinks() {
  // c_v = 0 only occurs with the general kernels. Variables with it may share factors, so they
  // are re-solved class by class, as a sweep updates them, and a split example alike: its
  // shards exchange their boundary messages after each class, those without such variables too
  // (whether any rank has some is agreed at the first call, which every rank makes).
  const bool here = kernels_ == &general_ && general_.has_kinks();
  if (!kinks_on_some_rank_) {
    double any[1] = {here ? 1.0 : 0.0};
    if (data_.ranks != nullptr) data_.ranks->allreduce({}, any);
    kinks_on_some_rank_ = any[0] > 0.0;
  }
  if (!*kinks_on_some_rank_ || (!here && !halo_)) return;
  messages_are_kept_ = false;
  pass_over_variables([&](int64_t, std::span<const LocalIndex> vars, Workspace& w) {
    if (here) general_.resolve_kinks(vars, engine_.potentials(), lambda_, w);
  });
}

bool LocalProblem::factors_in(int64_t phase) const {
  return phase % 2 == 1;
}

double LocalProblem::objective() {
  const WorkPlan& plan = active_evaluation_plan();
  run(plan, [&](int64_t c, int64_t phase, Workspace& w) {
    // A shard's copies of cut factors are in F at their owners: nothing to compute here.
    if (!chunk_counted_[c]) return;
    const WorkPlan::Chunk& chunk = plan.chunks[c];
    chunk_value_[c] =
        factors_in(phase)
            ? kernels_->factor_objective(chunk.begin, chunk.end, engine_.potentials(), lambda_, w)
            : kernels_->variable_objective(chunk.begin, chunk.end, engine_.potentials(), lambda_,
                                           w);
  });
  return sum_of_chunks(plan);
}

LocalEvaluation LocalProblem::evaluate(FiniteCheck check) {
  const WorkPlan& plan = active_evaluation_plan();
  // The offset's dual terms are those of the loss: both are part of the base.
  const std::span<const double> base = potential_base();
  const double* loss = base.empty() ? nullptr : base.data();
  const int64_t states = data_.num_states();
  // A shard checks its cut factors against the halo's beliefs, sent after the variable phase.
  const auto after_phase = [&](int64_t phase) {
    if (halo_ && !factors_in(phase)) halo_->beliefs(belief_.data());
  };
  run(
      plan,
      [&](int64_t c, int64_t phase, Workspace& w) {
        const WorkPlan::Chunk& chunk = plan.chunks[c];
        const bool factors = factors_in(phase);
        chunk_terms_[c] =
            factors ? kernels_->factor_beliefs(chunk.begin, chunk.end, engine_.potentials(),
                                               lambda_, belief_.data(), w)
                    : kernels_->variable_beliefs(chunk.begin, chunk.end, engine_.potentials(),
                                                 lambda_, loss, belief_.data(), w);
        // A belief that is not finite makes its region's term of F non-finite (every smax and
        // max over a region's scores carries a NaN or an inf): only then are the chunk's beliefs
        // read, since a term can also overflow where every belief is finite.
        if (std::isfinite(chunk_terms_[c].objective)) {
          chunk_beliefs_finite_[c] = 1;
          return;
        }
        const int64_t first =
            factors ? states + data_.table_offset[chunk.begin] : data_.state_offset[chunk.begin];
        const int64_t last =
            factors ? states + data_.table_offset[chunk.end] : data_.state_offset[chunk.end];
        chunk_beliefs_finite_[c] =
            all_finite(std::span<const double>(belief_).subspan(first, last - first)) &&
            (!factors || kernels_ != &general_ ||
             general_.folded_beliefs_finite(chunk.begin, chunk.end));
      },
      [](int64_t) {}, after_phase);
  const bool finite = check == FiniteCheck::Local ? all_values_finite() : true;
  if (check == FiniteCheck::Collective) require_finite();
  if (data_.shard) put_halo_beliefs_aside(belief_.data());
  BeliefTerms total;
  for (int64_t c = 0; c < plan.num_chunks(); ++c)
    if (chunk_counted_[c])
      total.add(chunk_terms_[c]);
    else
      total.violation = std::max(total.violation, chunk_terms_[c].violation);
  if (kernels_ == &general_) total.dual -= general_.fold_shared_beliefs(selected_);
  double expected_loss = 0.0;
  if (selected_.empty()) {
    for (size_t i = 0; i < base.size(); ++i) expected_loss += belief_[i] * base[i];
  } else if (!base.empty()) {
    for (int64_t n : selected_)
      for (int64_t i = data_.state_offset[data_.var_offset[n]];
           i < data_.state_offset[data_.var_offset[n + 1]]; ++i)
        expected_loss += belief_[i] * base[i];
  }
  // model_moments reads the folded tables (shared_tables.hpp) where it does not sum them per
  // table: example by example, or through a nonlinear model (its parameters are not the tables').
  if (kernels_ == &general_ && !general_.factors_with_folded_beliefs().empty()) {
    if (!selected_.empty())
      for (int64_t n : selected_)
        general_.unfold_beliefs(data_.factor_offset[n], data_.factor_offset[n + 1], belief_.data());
    else if (!engine_.model().is_linear())
      general_.unfold_beliefs(0, data_.owned_factors(), belief_.data());
  }
  return {total.objective, total.dual, expected_loss, total.violation, finite};
}

double LocalProblem::consistent_beliefs(std::span<double> z) {
  if (!selected_.empty())
    throw std::logic_error("consistent_beliefs: covers all examples, not a selection");
  const auto copy = [&] { consistent_belief_.assign(belief_.begin(), belief_.end()); };
  // Only the first copy allocates (checked, and named in an error); later ones reuse the array.
  if (!consistent_belief_.empty())
    copy();
  else
    allocate(settings_.source,
             "a consistent copy of the beliefs (" + std::to_string(belief_.size()) +
                 " states and table entries)",
             8.0 * static_cast<double>(belief_.size()), copy);
  // The cut factors this shard owns are repaired against the halo's beliefs.
  if (data_.shard) restore_halo_beliefs(consistent_belief_.data());
  const double* b = consistent_belief_.data();
  run(evaluation_plan_, [&](int64_t c, int64_t phase, Workspace& w) {
    chunk_value_[c] = 0.0;
    if (!chunk_counted_[c]) return;
    const WorkPlan::Chunk& chunk = evaluation_plan_.chunks[c];
    double terms = 0.0;
    if (!factors_in(phase)) {
      for (int64_t v = chunk.begin; v < chunk.end; ++v)
        terms += counting_.var[v] * entropy(b + data_.state_offset[v], data_.card[v]);
    } else {
      if (kernels_ == &general_)
        general_.unfold_beliefs(chunk.begin, chunk.end, consistent_belief_.data());
      make_factor_beliefs_consistent(data_, graph_, chunk.begin, chunk.end,
                                     consistent_belief_.data(), w);
      const double* tables = b + data_.num_states();
      for (int64_t a = chunk.begin; a < chunk.end; ++a)
        terms += counting_.factor[a] * entropy(tables + data_.table_offset[a],
                                               data_.table_offset[a + 1] - data_.table_offset[a]);
    }
    chunk_value_[c] = temperature_ * terms;
  });
  const double entropy_terms = sum_of_chunks(evaluation_plan_);
  if (data_.shard) put_halo_beliefs_aside(consistent_belief_.data());
  engine_.model().backward(engine_.theta(), consistent_belief_, z);
  return entropy_terms;
}

void LocalProblem::put_halo_beliefs_aside(double* belief) {
  const int64_t first = data_.state_offset[data_.owned_vars()];
  halo_belief_.assign(belief + first, belief + data_.num_states());
  std::fill(belief + first, belief + data_.num_states(), 0.0);
  // The copies of cut factors other shards own: their tables were written only to be checked.
  std::fill(belief + data_.num_states() + data_.table_offset[data_.owned_factors()],
            belief + data_.num_states() + data_.num_table_entries(), 0.0);
}

void LocalProblem::restore_halo_beliefs(double* belief) const {
  std::copy(halo_belief_.begin(), halo_belief_.end(),
            belief + data_.state_offset[data_.owned_vars()]);
}

// Each value is checked, not the sums over this rank's regions: those can overflow where every
// value is finite, and would then fail on one rank count and not on another. A non-finite F
// from finite values is the trainer's to report ("training diverged"). A message that is not
// finite enters the scores of its factor and its variable with opposite signs, so one of them
// holds a +inf or a NaN, which makes beliefs NaN, except in a region with a negative counting
// number, where a +inf score only gets belief 0. Sweeps make such messages only from potentials
// near the top of the range of doubles, so they are read only then, or after an import of
// messages that were not all finite.
bool LocalProblem::all_values_finite() const {
  return engine_.potentials_finite() &&
         std::all_of(chunk_beliefs_finite_.begin(), chunk_beliefs_finite_.end(),
                     [](uint8_t chunk_finite) { return chunk_finite != 0; }) &&
         ((engine_.potentials_bounded() && imported_finite_) || all_finite(messages()));
}

void LocalProblem::require_finite() const {
  const bool finite = all_values_finite();
  run_collectively(data_.communicator(), [&] {
    if (!finite) throw InputError(settings_.source + ": " + explain_non_finite());
  });
}

std::string LocalProblem::explain_non_finite() const {
  const PotentialSource u{data_, engine_.theta(), loss_, engine_.potential_array()};
  const int64_t potential = first_non_finite(engine_.potential_array());
  if (potential >= 0) return describe_potential(u, potential);
  // Huge potentials are the cause unless the bound from theta rules them out (then the
  // messages came from set_messages: a checkpoint's).
  const std::string cause =
      engine_.potentials_bounded() ? "" : ": " + describe_largest_potential(u, temperature_);
  const std::vector<double> arena = messages();
  const int64_t message = first_non_finite(arena);
  if (message >= 0) return describe_message(data_, graph_, arena, message) + cause;
  return describe_belief(data_, belief_, first_non_finite(belief_)) + cause;
}

void LocalProblem::model_moments(std::span<double> z) const {
  if (!selected_.empty()) {
    std::fill(z.begin(), z.end(), 0.0);
    for (int64_t n : selected_)
      engine_.model().add_backward_example(n, engine_.theta(), belief_, z);
    return;
  }
  if (kernels_ != &general_ || !engine_.model().is_linear()) {
    engine_.model().backward(engine_.theta(), belief_, z);
    return;
  }
  // The beliefs of shared-table factors are folded into sums per table (shared_tables.hpp).
  engine_.model().backward(engine_.theta(), belief_, z, general_.factors_with_folded_beliefs());
  general_.add_shared_moments(z);
}

}  // namespace pdsp
