#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "pdsp/app/command_line.hpp"
#include "pdsp/app/commands.hpp"
#include "pdsp/app/flag_checks.hpp"
#include "pdsp/app/map_labels.hpp"
#include "pdsp/app/model_checks.hpp"
#include "pdsp/app/progress.hpp"
#include "pdsp/data/dataset_fingerprint.hpp"
#include "pdsp/data/model_file.hpp"
#include "pdsp/data/output_checks.hpp"
#include "pdsp/data/partition.hpp"
#include "pdsp/data/prediction_file.hpp"
#include "pdsp/features/potential_models.hpp"
#include "pdsp/inference/slice_loading.hpp"
#include "pdsp/learners/train_config.hpp"
#include "pdsp/learning/approximate_crf.hpp"
#include "pdsp/learning/bethe_rda.hpp"
#include "pdsp/learning/clamping.hpp"
#include "pdsp/learning/local_problem.hpp"
#include "pdsp/learning/sweep_to_tolerance.hpp"
#include "pdsp/util/clock.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

struct PredictFlags {
  std::string data, model, out, epsilon, counting, inference = "auto";
  int max_sweeps = 1000;
  double tol = 1e-9;
  int rda_iters = 10;
  int threads = 0;
  std::string shards = "auto";
  bool quiet = false;
  bool clamp = false;
};

void declare_flags(CLI::App& app, PredictFlags& f) {
  const std::string files = "Files", inference = "Inference", run = "Run";
  app.add_option("--data", f.data, "data set to predict (labels, if present, give the error)")
      ->required()
      ->group(files);
  app.add_option("--model", f.model, "model file written by pdsp train")->required()->group(files);
  app.add_option("--out", f.out, "prediction file to write (HDF5)")->required()->group(files);
  app.add_option("--epsilon", f.epsilon, "temperature (default: the model's)")->group(inference);
  std::vector<std::string> counting_modes = {""};  // "": the model's
  for (CountingMode mode : kCountingModes) counting_modes.push_back(counting_mode_name(mode));
  app.add_option("--counting", f.counting, "counting numbers (default: the model's)")
      ->check(CLI::IsMember(counting_modes))
      ->group(inference);
  app.add_option("--inference", f.inference, "auto is the model's own inference")
      ->check(CLI::IsMember({"auto", "message-passing", "lbp", "mean-field"}))
      ->group(inference);
  app.add_option("--max-sweeps", f.max_sweeps, "upper bound on message sweeps")
      ->check(whole_at_least(1))
      ->group(inference);
  app.add_option("--tol", f.tol, "stop when no message entry changes by more than this")
      ->check(finite_at_least(0))
      ->group(inference);
  app.add_flag("--clamp", f.clamp,
               "hold every variable whose label in --data is a state (>= 0) at it and predict "
               "the others (-1) from the conditional problem")
      ->group(inference);
  app.add_option("--rda-iters", f.rda_iters,
                 "Bethe-RDA iterations with a model's non-local weights on data with non-local "
                 "terms, at epsilon 1 whatever --epsilon says, labels by MAP (0: leave the terms "
                 "out)")
      ->check(whole_at_least(0))
      ->group(inference);
  app.add_option("--threads", f.threads, "OpenMP threads per rank (0: OMP_NUM_THREADS)")
      ->check(whole_at_least(0))
      ->group(run);
  add_shards_option(app, f.shards, run);
  app.add_flag("--quiet", f.quiet, "no progress lines")->group(run);
}

// Arg-max of every own variable's belief (the lowest state among ties) and its marginal, from
// the variables' beliefs (one per state), with where they go in the file.
PredictionSlice read_off_predictions(const Dataset& data, std::span<const double> beliefs) {
  PredictionSlice slice;
  const int64_t vars = data.owned_vars(), states = data.state_offset[vars];
  if (data.shard) {
    const int64_t first_state = data.first_state;  // the example's
    for (const ArrayRun& run : data.shard->own_var_runs)
      slice.var_runs.push_back({data.first_var + run.file, run.local, run.count});
    for (const ArrayRun& run : data.shard->own_state_runs)
      slice.state_runs.push_back({first_state + run.file, run.local, run.count});
  } else {
    slice.var_runs = {{data.first_var, 0, vars}};
    slice.state_runs = {{data.first_state, 0, states}};
  }
  slice.marginal.assign(beliefs.begin(), beliefs.begin() + states);
  slice.label.resize(static_cast<size_t>(vars));
  for (int64_t v = 0; v < vars; ++v) slice.label[v] = predicted_label(data, beliefs, v);
  return slice;
}

// The function classes the model file records, with its trees.
ModelChoice model_choice_of(const ModelFile& model, const std::string& path) {
  ModelChoice choice;
  choice.unary = model.unary_model;
  choice.pairwise = model.pairwise_model;
  choice.hidden = static_cast<int>(model.hidden);
  choice.stored_trees = model.trees;
  choice.trees_from_file = true;
  choice.source = path;
  return choice;
}

// The model's potentials on `slice` at `settings`, built on every rank together (a network or
// a tree ensemble may refuse the data on some ranks only); theta must be what the model's
// classes take on the data.
std::unique_ptr<LocalProblem> model_problem(const Dataset& slice, const ProblemSettings& settings,
                                            const ModelFile& model, const PredictFlags& f,
                                            Communicator& comm) {
  std::unique_ptr<LocalProblem> problem;
  run_collectively(comm, [&] {
    problem = std::make_unique<LocalProblem>(
        slice, settings, make_potential_model(slice, model_choice_of(model, f.model)));
    if (problem->num_params() != static_cast<int64_t>(model.theta.size()))
      throw InputError(f.model + ": /theta has " + std::to_string(model.theta.size()) +
                       " parameters, but its classes (unary " + model.unary_model + ", pairwise " +
                       model.pairwise_model + ") on " + f.data + " take " +
                       std::to_string(problem->num_params()));
  });
  return problem;
}

// Message passing at the model's (or the given) epsilon and counting numbers, until no message
// moves by more than --tol on any rank; `beliefs` gets the variables' beliefs. At eps = 0 on data
// without cycles, the exact MAP labelling by dynamic programming instead (map_labels.hpp; on the
// OCR chains 255 sweeps took 5.9 s), its indicator as the beliefs: on a tree the local polytope
// is tight, so that is the LP optimum the sweeps approach. Returns a line describing the run.
std::string primal_dual_beliefs(const Dataset& slice, const ProblemSettings& settings,
                                const ModelFile& model, const PredictFlags& f, Communicator& comm,
                                Progress& progress, std::vector<double>& beliefs) {
  const std::unique_ptr<LocalProblem> problem = model_problem(slice, settings, model, f, comm);
  std::vector<double> offset;
  if (f.clamp) offset = clamp_offset(*problem, slice.label, model.theta);
  if (settings.epsilon == 0 && examples_with_a_cycle(slice, comm) == 0) {
    const std::vector<int32_t> labels = exact_map_labels(
        slice, problem->graph(), problem->model(), model.theta, offset, problem->shared_tables());
    beliefs.assign(static_cast<size_t>(slice.state_offset[slice.owned_vars()]), 0.0);
    for (int64_t v = 0; v < slice.owned_vars(); ++v) beliefs[slice.state_offset[v] + labels[v]] = 1;
    return "exact MAP labels by dynamic programming (epsilon=0, no example with a cycle)";
  }
  problem->set_potential_offset(offset);
  problem->set_theta(model.theta);
  double change = 0.0;
  const int sweeps =
      sweep_to_tolerance(*problem, f.max_sweeps, f.tol, change, [&](int done, double largest) {
        char detail[96];
        std::snprintf(detail, sizeof detail, "sweep %d of at most %d, largest change %.3g", done,
                      f.max_sweeps, largest);
        progress.update(detail);
      });
  problem->evaluate();
  // Only the own variables' part: the factor tables are not predicted (OCR's test set: 223 MB).
  beliefs.assign(problem->beliefs().begin(),
                 problem->beliefs().begin() + slice.state_offset[slice.owned_vars()]);
  char line[160];
  std::snprintf(line, sizeof line, "%d sweeps (last change %.3g), epsilon=%g counting=%s", sweeps,
                change, settings.epsilon, counting_mode_name(problem->counting().mode).c_str());
  return line;
}

// With the model's non-local weights on data with non-local terms: Bethe-RDA (bethe_rda.hpp)
// from the model's theta at eps = 1, as Vilnis et al. run it; `beliefs` gets its last iterate's
// marginals and `labels` the MAP labelling at its last potentials, as they decode: exactly by
// dynamic programming when no example has a cycle (map_labels.hpp; on the UMass citations' test
// set max-product had stopped at its 1,000-sweep limit short of --tol, with the same labels:
// predict took 23.5 s, now 3.9 s), else by max-product at eps = 0 with the same offset until
// --tol. Returns the line for the log.
std::string nonlocal_predictions(const Dataset& slice, ProblemSettings settings,
                                 const ModelFile& model, const PredictFlags& f, Communicator& comm,
                                 std::vector<double>& beliefs, std::vector<int32_t>& labels) {
  std::vector<double> offset;
  int iterations = 0, calls = 0;
  const int64_t cyclic = examples_with_a_cycle(slice, comm);
  char decoded[120] = "exact MAP labels by dynamic programming";
  {  // the oracle's problem is gone before a decoder's is built
    settings.epsilon = 1.0;
    const std::unique_ptr<LocalProblem> problem = model_problem(slice, settings, model, f, comm);
    RdaSettings rda_settings;
    rda_settings.iterations = f.rda_iters;
    rda_settings.max_sweeps = f.max_sweeps;
    rda_settings.sweep_tolerance = f.tol;
    BetheRda rda(*problem, slice.nonlocal, model.psi, rda_settings);
    calls = rda.run(model.theta);
    iterations = rda.iterations();
    beliefs.assign(rda.marginals().begin(),
                   rda.marginals().begin() + slice.state_offset[slice.owned_vars()]);
    offset.assign(rda.offset().begin(), rda.offset().end());
    if (cyclic == 0)
      labels = exact_map_labels(slice, problem->graph(), problem->model(), model.theta, offset,
                                problem->shared_tables());
  }
  if (cyclic > 0) {
    settings.epsilon = 0.0;
    const std::unique_ptr<LocalProblem> decoder = model_problem(slice, settings, model, f, comm);
    decoder->set_potential_offset(offset);
    decoder->set_theta(model.theta);
    double change = 0.0;
    const int sweeps =
        sweep_to_tolerance(*decoder, f.max_sweeps, f.tol, change, [](int, double) {});
    decoder->evaluate();
    labels = read_off_predictions(slice, decoder->beliefs()).label;
    std::snprintf(decoded, sizeof decoded,
                  "MAP labels by %d max-product sweeps (last change %.3g; %lld examples with a "
                  "cycle)",
                  sweeps, change, static_cast<long long>(cyclic));
  }
  char line[300];
  std::snprintf(line, sizeof line,
                "Bethe-RDA with the model's non-local weights: %d iterations, %d marginal "
                "inference calls at epsilon=1; %s",
                iterations, calls, decoded);
  return line;
}

// The likelihood baselines predict with the inference they were trained with, each example
// from the best of several starts, the annealed one included (ApproximateCrf::
// infer_all_best_start); the line says which fixed points were chosen and their approximate
// log Z (minus the Bethe free energy for BP).
std::string approximate_beliefs(const Dataset& slice, ApproximateInference inference,
                                const ModelFile& model, const PredictFlags& f,
                                std::vector<double>& beliefs, Communicator& comm) {
  ApproximateCrf crf(slice, inference, f.max_sweeps, f.tol);
  crf.set_theta(model.theta);
  std::vector<int> chosen;
  const InferenceSummary summary = crf.infer_all_best_start(chosen, /*anneal=*/true);
  // Totals over the ranks: log Z, unconverged examples, examples whose best start was zero
  // messages (uniform beliefs), pulled towards some state, pulled towards the own best states,
  // annealed.
  std::vector<double> totals = {
      summary.log_z, static_cast<double>(summary.unconverged), 0, 0, 0, 0};
  for (int start : chosen)
    totals[start == 0                      ? 2
           : start == crf.own_best_start() ? 4
           : start == crf.annealed_start() ? 5
                                           : 3] += 1;
  comm.allreduce_sum(std::span<double>(totals));
  beliefs.assign(crf.beliefs().begin(), crf.beliefs().begin() + slice.num_states());
  char line[512];
  std::snprintf(line, sizeof line,
                "%s to convergence (at most %d sweeps%s, per example and start), the best of 3 + "
                "states starts per example: approximate log Z %.10g (%s); best start: zero "
                "messages in %.0f examples, pulled towards a state in %.0f, towards each "
                "variable's own best state in %.0f, annealed in %.0f; %.0f examples did not "
                "converge",
                inference_name(inference).c_str(), f.max_sweeps,
                // Mean field's coordinate ascent raises its bound at every update: no damping.
                inference == ApproximateInference::LoopyBp ? ", then as many damped ones" : "",
                totals[0],
                inference == ApproximateInference::LoopyBp ? "minus the Bethe free energy"
                                                           : "the mean-field bound",
                totals[2], totals[3], totals[4], totals[5], totals[1]);
  return line;
}

// The held variables' labels and marginals are their labels exactly (the penalty leaves their
// other states a weight of 0 already; this states it rather than relying on it).
void hold_clamped(const Dataset& slice, PredictionSlice& predictions) {
  for (int64_t v = 0; v < slice.owned_vars(); ++v) {
    if (slice.label[v] < 0) continue;
    predictions.label[v] = slice.label[v];
    for (int32_t s = 0; s < slice.card[v]; ++s)
      predictions.marginal[slice.state_offset[v] + s] = s == slice.label[v] ? 1.0 : 0.0;
  }
}

// Over all ranks: variables predicted wrong among those with a label that were predicted, those
// counted, those held (--clamp) and those without a label (-1).
struct ErrorCounts {
  double wrong = 0, counted = 0, held = 0, unobserved = 0;
};

ErrorCounts count_errors(const Dataset& slice, const PredictionSlice& predictions, bool clamp,
                         Communicator& comm) {
  double counts[4] = {0, 0, 0, 0};
  if (slice.has_labels())
    for (int64_t v = 0; v < slice.owned_vars(); ++v) {
      if (slice.label[v] < 0) {
        counts[3] += 1;
      } else if (clamp) {
        counts[2] += 1;
      } else {
        counts[0] += predictions.label[v] != slice.label[v];
        counts[1] += 1;
      }
    }
  comm.allreduce_sum(std::span<double>(counts));
  return {counts[0], counts[1], counts[2], counts[3]};
}

void print_error_line(const ErrorCounts& c, bool clamp, bool labelled) {
  const auto count = [](double x) { return static_cast<long long>(x); };
  if (!labelled) return;
  if (c.counted > 0) {
    std::printf("per-variable error: %.4f%% (%lld of %lld labelled variables",
                100.0 * c.wrong / c.counted, count(c.wrong), count(c.counted));
    if (c.unobserved > 0) std::printf("; %lld unlabelled (-1) not counted", count(c.unobserved));
    std::printf(")\n");
  } else if (clamp && c.unobserved == 0) {
    std::printf(
        "per-variable error: not measured: every variable has a label and was held at it "
        "(%lld)\n",
        count(c.held));
  } else if (clamp) {
    std::printf(
        "per-variable error: not measured: the %lld predicted variables have no label "
        "(%lld held at theirs)\n",
        count(c.unobserved), count(c.held));
  } else {
    std::printf("per-variable error: not measured: no variable has a label (%lld are -1)\n",
                count(c.unobserved));
  }
}

}  // namespace

int run_predict(const Invocation& invocation, Communicator& comm) {
  PredictFlags f;
  CommandLine command_line(
      invocation.command,
      "Runs message passing with fixed theta (no loss augmentation) to convergence and\n"
      "writes /prediction/label and /prediction/marginal.");
  declare_flags(command_line.flags(), f);
  if (!command_line.parse_collectively(invocation.args, comm)) return 0;

  ModelFile model;
  ProblemSettings settings;
  run_collectively(comm, [&] {
    check_outputs({{"--out", f.out}}, {{"--data", f.data}, {"--model", f.model}});
    model = read_model(f.model);
    settings.epsilon = model.epsilon;
    if (!f.epsilon.empty() && (!CLI::detail::lexical_cast(f.epsilon, settings.epsilon) ||
                               !is_valid_epsilon(settings.epsilon)))
      throw InputError("--epsilon: '" + f.epsilon + "' is not 0 or a finite number >= 1e-12");
    settings.counting = parse_counting_mode(f.counting.empty() ? model.counting : f.counting);
    if (settings.counting == CountingMode::TreeReweighted)
      keep_examples_whole(f.shards, "--counting trw");
    check_model_names(model, f.model);
    if (f.inference == "auto")
      f.inference = model.inference.empty() ? "message-passing" : model.inference;
    if (f.inference != "message-passing") {
      parse_inference(f.inference);
      // The likelihood baselines' inference runs on whole examples.
      keep_examples_whole(f.shards, "--inference " + f.inference);
    }
    settings.loss_augmented = false;
    settings.shallow_trees_along = true;
    settings.source = f.data;
    if (!model.linear_classes() && f.inference != "message-passing")
      throw InputError("--inference " + f.inference + ": " + f.model +
                       " has nonlinear function classes, which only message passing predicts");
  });
  use_threads(f.threads);

  const auto started = Clock::now();
  DatasetLayout layout;
  Progress progress(comm.is_root() && !f.quiet, "pdsp predict");
  const Dataset slice = load_rank_slice(
      f.data, comm, &layout, [&](const std::string& stage) { progress.update(stage); },
      parse_shard_count(f.shards));
  run_collectively(comm, [&] {
    // A nonlinear model's networks follow the data's parameters in theta (primal_dual_beliefs
    // checks their count).
    if (model.linear_classes() ? layout.num_params != static_cast<int64_t>(model.theta.size())
                               : layout.num_params > static_cast<int64_t>(model.theta.size()))
      throw InputError(f.data + ": @num_params is " + std::to_string(layout.num_params) +
                       " but the model " + f.model + " has " + std::to_string(model.theta.size()) +
                       " parameters");
    if (!model.psi.empty() && layout.nonlocal.num_states > 0 && f.rda_iters > 0) {
      if (static_cast<int64_t>(model.psi.size()) != layout.nonlocal.num_weights())
        throw InputError(f.model + ": /nonlocal/psi has " + std::to_string(model.psi.size()) +
                         " weights, but the non-local terms of " + f.data + " take " +
                         std::to_string(layout.nonlocal.num_weights()) +
                         " (templates, then psi_u and psi_w)");
      if (slice.shard)
        throw InputError("--shards " + f.shards +
                         ": non-local terms need whole examples; use "
                         "--shards 1");
      if (f.inference != "message-passing")
        throw InputError("--inference " + f.inference +
                         ": non-local terms are predicted by message passing (Bethe-RDA)");
      if (f.clamp)
        throw InputError("--clamp: " + f.data +
                         " has non-local terms, which Bethe-RDA predicts without clamping; use "
                         "--rda-iters 0 to leave them out");
    }
    if (f.clamp && !layout.has_labels)
      throw InputError("--clamp: " + f.data + " has no /vars/label to hold variables at");
    if (f.clamp && f.inference != "message-passing")
      throw InputError("--clamp: --inference " + f.inference +
                       " does not clamp; use --inference message-passing");
  });
  std::vector<double> beliefs;
  std::vector<int32_t> labels;
  const bool nonlocal = !model.psi.empty() && slice.nonlocal.num_states > 0 && f.rda_iters > 0;
  std::string how =
      nonlocal ? nonlocal_predictions(slice, settings, model, f, comm, beliefs, labels)
      : f.inference == "message-passing"
          ? primal_dual_beliefs(slice, settings, model, f, comm, progress, beliefs)
          : approximate_beliefs(slice, parse_inference(f.inference), model, f, beliefs, comm);
  // Say when a model and data disagree about non-local terms: the prediction is still valid.
  if (model.psi.empty() && layout.nonlocal.num_states > 0)
    how += "; the non-local terms of " + f.data + " left out (the model has no /nonlocal/psi)";
  if (!model.psi.empty() && layout.nonlocal.num_states == 0)
    how += "; the model's non-local weights unused (" + f.data + " has no non-local terms)";
  PredictionSlice predictions = read_off_predictions(slice, beliefs);
  if (nonlocal) predictions.label = labels;
  if (f.clamp) hold_clamped(slice, predictions);
  const Provenance provenance = describe_run(invocation, command_line.effective_config(),
                                             dataset_fingerprint(slice, comm), comm);
  progress.update("writing " + f.out);
  write_predictions(f.out, predictions, layout.num_vars(), layout.state_offset.back(), provenance,
                    model.provenance, comm);

  const ErrorCounts counts = count_errors(slice, predictions, f.clamp, comm);
  const double seconds = seconds_since(started);
  if (comm.is_root()) {
    std::printf("pdsp predict: %s, %.3f s\n", how.c_str(), seconds);
    print_error_line(counts, f.clamp, slice.has_labels());
    std::printf("predictions written to %s\n", f.out.c_str());
  }
  return 0;
}

}  // namespace pdsp
