#include "pdsp/learning/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "pdsp/data/checksum.hpp"
#include "pdsp/data/collective_output.hpp"
#include "pdsp/data/hdf5_file.hpp"
#include "pdsp/data/provenance.hpp"
#include "pdsp/learning/checkpoint_lbfgs.hpp"
#include "pdsp/learning/checkpoint_validation.hpp"
#include "pdsp/util/errors.hpp"

namespace pdsp {
namespace {

constexpr uint64_t kThetaTag = 101;
constexpr uint64_t kMessageTag = 102;
constexpr uint64_t kConfigTag = 103;
constexpr uint64_t kDualTags[3] = {108, 109, 110};
constexpr uint64_t kTreeTag = 111;
constexpr uint64_t kIterateTag = 112;

// Each rank's `count`, summed over the ranks before it and over all.
std::pair<int64_t, int64_t> prefix_and_total(int64_t count, Communicator& comm) {
  std::vector<int64_t> counts(static_cast<size_t>(comm.size()), 0);
  counts[comm.rank()] = count;
  comm.allreduce_sum(std::span<int64_t>(counts));
  int64_t first = 0, total = 0;
  for (int r = 0; r < comm.size(); ++r) {
    if (r < comm.rank()) first += counts[r];
    total += counts[r];
  }
  return {first, total};
}

// The checksum of the written runs, each entry at its position in the file, over all ranks.
std::string messages_checksum(uint64_t tag, const MessageRuns& runs, std::span<const double> local,
                              Communicator& comm) {
  Checksum sum;
  for (const ArrayRun& run : runs.written)
    sum.add<double>(tag, run.file, local.subspan(run.local, run.count));
  sum.combine(comm);
  return sum.hex();
}

std::string hex_checksum(uint64_t tag, int64_t first, std::span<const double> values,
                         Communicator* combine_over) {
  Checksum sum;
  sum.add<double>(tag, first, values);
  if (combine_over != nullptr) sum.combine(*combine_over);
  return sum.hex();
}

// Bundles written before the weights have none, and their checksum covers the rest.
std::string dual_checksum(const DualBundle& bundle) {
  Checksum sum;
  sum.add<double>(kDualTags[0], 0, bundle.moments);
  sum.add<double>(kDualTags[1], 0, bundle.losses);
  if (!bundle.weights.empty()) sum.add<double>(kDualTags[2], 0, bundle.weights);
  return sum.hex();
}

std::string text_checksum(const std::string& text, uint64_t tag = kConfigTag) {
  Checksum sum;
  for (size_t i = 0; i < text.size(); ++i)
    sum.add_word(tag, static_cast<int64_t>(i), static_cast<unsigned char>(text[i]));
  return sum.hex();
}

// The boosted trees (a trees class's, stored_trees.hpp): each ensemble's description and
// XGBoost model as text, and its leaf values; empty without trees.
std::string trees_checksum(const std::vector<StoredEnsemble>& trees) {
  if (trees.empty()) return "";
  std::string text, values;
  for (const StoredEnsemble& e : trees) {
    text += e.kind + " " + std::to_string(e.type) + " " + std::to_string(e.outputs) + " ";
    for (int64_t offset : e.tree_offset) text += std::to_string(offset) + ",";
    text += e.booster;
    values += hex_checksum(kTreeTag, 0, e.leaf_value, nullptr);
  }
  return text_checksum(text, kTreeTag) + values;
}

// The stochastic learners' last iterate (theta is their average); empty for the others.
std::string iterate_checksum(const TrainingState& state) {
  return state.iterate.empty() ? "" : hex_checksum(kIterateTag, 0, state.iterate, nullptr);
}

std::string settings_line(const Checkpoint& c) {
  std::string settings;
  for (const auto& [name, value] : c.compatibility)
    settings += (settings.empty() ? "" : " ") + name + "=" + value;
  return settings;
}

std::string bits(double x) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(std::bit_cast<uint64_t>(x)));
  return text;
}

// Every header field in one canonical text (doubles by their bits), for the header checksum:
// a flipped bit anywhere in the attributes is damage, not a different run.
// Version 1 files have no L-BFGS memory (`lbfgs_checksum` empty), and their text ends before it;
// versions 1 and 2 have no smoothing temperature, and theirs ends before that. `dual_next` is
// the ring position of a bundle without weights (0 with them).
std::string header_text(const Checkpoint& c, const TrainingState& state, int64_t version,
                        int64_t num_params, int64_t message_entries,
                        const std::string& theta_checksum, const std::string& messages_checksum,
                        const std::string& lbfgs_checksum, int64_t dual_next = 0) {
  return "iteration=" + std::to_string(state.iterations_done) + "\nstep=" + bits(state.step) +
         "\nprevious=" + bits(state.previous_objective) +
         "\nseconds=" + bits(state.seconds_trained) + "\nstop=" + state.stop.text +
         "\nmetrics_bytes=" + std::to_string(c.metrics_bytes) +
         "\nmetrics_checksum=" + c.metrics_checksum + "\nconfig=" + c.config_line +
         "\nsettings=" + settings_line(c) + "\ndata=" + c.data_fingerprint +
         "\nnum_params=" + std::to_string(num_params) +
         "\nmessage_entries=" + std::to_string(message_entries) + "\ntheta=" + theta_checksum +
         "\nmessages=" + messages_checksum +
         (lbfgs_checksum.empty() ? "" : "\nlbfgs=" + lbfgs_checksum) +
         (version < 3 ? ""
                      : "\nsmoothing=" + bits(state.smoothing) +
                            "\ndual_best=" + bits(state.dual_bundle.best) +
                            "\ndual_next=" + std::to_string(dual_next) +
                            "\ndual=" + dual_checksum(state.dual_bundle)) +
         (state.trees.empty() ? "" : "\ntrees=" + trees_checksum(state.trees)) +
         (state.iterate.empty()
              ? ""
              : "\nsteps=" + std::to_string(state.steps) + "\niterate=" + iterate_checksum(state)) +
         (state.validation.checks == 0 ? ""
                                       : "\nvalidation=" + validation_checksum(state.validation));
}

// The eps = 0 dual bundle: up to dual_bundle_capacity losses, a block of `params` moments for
// each and as many weights, or none in files written before them. Returns @dual_next, the ring
// position of a bundle without weights.
int64_t read_dual_bundle(const h5::File& file, const std::string& path, int64_t params,
                         DualBundle& bundle) {
  const int64_t points = file.length("/dual/losses");
  const bool weighted = file.exists("/dual/weights");
  const int capacity = weighted ? dual_bundle_capacity(params) : kRingDualPoints;
  if (points > capacity)
    throw_file_error(path, "/dual/losses",
                     "holds " + std::to_string(points) + " values, more than the " +
                         std::to_string(capacity) + " points a bundle of " +
                         std::to_string(params) + " parameters keeps");
  if (file.length("/dual/moments") != points * params)
    throw_file_error(path, "/dual/moments",
                     "holds " + std::to_string(file.length("/dual/moments")) + " values, not " +
                         std::to_string(points) + " x " + std::to_string(params));
  const int64_t next = file.read_int_attribute("dual_next");
  if (next < 0 || (next > 0 && (weighted || next >= points)))
    throw_file_error(path, "@dual_next", "is " + std::to_string(next) + ", outside the bundle");
  bundle.best = file.read_double_attribute("dual_best");
  bundle.losses = file.read<double>("/dual/losses", 0, points);
  bundle.moments = file.read<double>("/dual/moments", 0, points * params);
  if (!weighted) return next;
  if (file.length("/dual/weights") != points)
    throw_file_error(path, "/dual/weights",
                     "holds " + std::to_string(file.length("/dual/weights")) + " values, not " +
                         std::to_string(points));
  bundle.weights = file.read<double>("/dual/weights", 0, points);
  double sum = 0;
  for (int64_t k = 0; k < points; ++k) {
    const double w = bundle.weights[static_cast<size_t>(k)];
    if (!(w >= 0 && w <= 1))
      throw_file_error(path, "/dual/weights",
                       "[" + std::to_string(k) + "] is " + number_text(w) + ", not in [0, 1]");
    sum += w;
  }
  if (points > 0 && !(std::abs(sum - 1.0) <= 1e-9))
    throw_file_error(path, "/dual/weights", "sums to " + number_text(sum) + ", not 1");
  return 0;
}

// Slices of whole examples: one run per rank, in rank order.
MessageRuns contiguous_runs(int64_t local_entries, Communicator& comm) {
  MessageRuns runs;
  const auto [first, total] = prefix_and_total(local_entries, comm);
  runs.written = runs.read = {{first, 0, local_entries}};
  runs.total = total;
  return runs;
}

}  // namespace

MessageRuns message_runs(const Dataset& slice, int64_t local_entries, Communicator& comm) {
  const ExampleShard* shard = slice.shard.get();
  if (shard == nullptr) return contiguous_runs(local_entries, comm);
  MessageRuns runs;
  // The example's entries count once, at its shard 0: every shard of the group finds the
  // example's first position from the sum over the ranks before it.
  const int64_t example = shard->example_message_entries;
  const auto [before, total] = prefix_and_total(shard->index == 0 ? example : 0, comm);
  const int64_t base = before - (shard->index == 0 ? 0 : example);
  for (const ArrayRun& run : shard->own_message_runs)
    runs.written.push_back({base + run.file, run.local, run.count});
  runs.read = runs.written;
  for (const ArrayRun& run : shard->halo_message_runs)
    runs.read.push_back({base + run.file, run.local, run.count});
  runs.total = total;
  return runs;
}

void write_checkpoint(const std::string& path, const Checkpoint& c,
                      const std::vector<double>& local_messages, Communicator& comm) {
  write_checkpoint(path, c, c.state, local_messages, comm,
                   contiguous_runs(static_cast<int64_t>(local_messages.size()), comm));
}

void write_checkpoint(const std::string& path, const Checkpoint& c, const TrainingState& state,
                      const std::vector<double>& local_messages, Communicator& comm,
                      const MessageRuns& runs) {
  const int64_t total = runs.total;
  const std::string messages_checksum =
      pdsp::messages_checksum(kMessageTag, runs, local_messages, comm);
  CollectiveOutput output(path, comm, [&](h5::File& file) {
    file.write_attribute("format", std::string(kCheckpointFormat));
    file.write_attribute("format_version", kCheckpointFormatVersion);
    const auto params = static_cast<int64_t>(state.theta.size());
    const std::string theta_checksum = hex_checksum(kThetaTag, 0, state.theta, nullptr);
    file.write_attribute("iteration", int64_t{state.iterations_done});
    file.write_attribute("step", state.step);
    file.write_attribute("previous_objective", state.previous_objective);
    file.write_attribute("smoothing", state.smoothing);
    file.write_attribute("dual_best", state.dual_bundle.best);
    file.write_attribute("dual_next", int64_t{0});
    file.write_attribute("seconds_trained", state.seconds_trained);
    file.write_attribute("stop_reason", state.stop.text);
    file.write_attribute("metrics_bytes", c.metrics_bytes);
    file.write_attribute("metrics_checksum", c.metrics_checksum);
    file.write_attribute("config", c.config_line);
    file.write_attribute("config_hash", text_checksum(c.config_line));
    file.write_attribute("data", c.data_fingerprint);
    file.write_attribute("settings", settings_line(c));
    file.write_attribute("num_params", params);
    file.write_attribute("message_entries", total);
    file.write_attribute("written_by_ranks", int64_t{comm.size()});
    file.write_attribute("checksum_theta", theta_checksum);
    file.write_attribute("checksum_messages", messages_checksum);
    const std::string memory_checksum = lbfgs_checksum(state.lbfgs, params);
    file.write_attribute("checksum_lbfgs", memory_checksum);
    if (!state.trees.empty()) file.write_attribute("checksum_trees", trees_checksum(state.trees));
    if (!state.iterate.empty()) {
      file.write_attribute("steps", state.steps);
      file.write_attribute("checksum_iterate", iterate_checksum(state));
    }
    write_provenance(file, c.provenance);
    file.write_attribute(
        "checksum_header",
        text_checksum(header_text(c, state, kCheckpointFormatVersion, params, total, theta_checksum,
                                  messages_checksum, memory_checksum)));
    file.write("/theta", state.theta);
    write_ensembles(file, state.trees);
    if (!state.iterate.empty()) file.write("/stochastic/iterate", state.iterate);
    write_validation(file, state.validation);
    write_lbfgs_memory(file, state.lbfgs, params);
    file.write("/dual/moments", state.dual_bundle.moments);
    file.write("/dual/losses", state.dual_bundle.losses);
    // A bundle without weights (none of the trainer's) is written as before the weights were.
    if (state.dual_bundle.weights.size() == state.dual_bundle.size())
      file.write("/dual/weights", state.dual_bundle.weights);
    file.create_dataset<double>("/messages", total);
  });
  output.write_in_turn([&](h5::File& file) {
    for (const ArrayRun& run : runs.written)
      file.write_slice<double>(
          "/messages", run.file,
          std::span<const double>(local_messages).subspan(run.local, run.count));
  });
  output.commit();
}

Checkpoint read_checkpoint_file_header(const std::string& path) {
  Checkpoint c;
  const h5::File file = h5::File::open_read(path);
  const std::string format = file.read_string_attribute("format");
  if (format != kCheckpointFormat)
    throw_file_error(path, "@format", "is '" + format + "', not a pdsp checkpoint");
  const int64_t version = file.read_int_attribute("format_version");
  if (version < 1 || version > kCheckpointFormatVersion)
    throw_file_error(path, "@format_version",
                     "unknown checkpoint version " + std::to_string(version));
  c.state.iterations_done = static_cast<int>(file.read_int_attribute("iteration"));
  c.state.step = file.read_double_attribute("step");
  c.state.previous_objective = file.read_double_attribute("previous_objective");

  c.state.seconds_trained = file.read_double_attribute("seconds_trained");
  c.state.stop = final_stop_from_text(file.read_string_attribute("stop_reason"));
  c.metrics_bytes = file.read_int_attribute("metrics_bytes");
  c.metrics_checksum = file.read_string_attribute("metrics_checksum");
  c.config_line = file.read_string_attribute("config");
  c.data_fingerprint = file.read_string_attribute("data");
  std::istringstream settings(file.read_string_attribute("settings"));
  std::string field;
  while (settings >> field) {
    const size_t equals = field.find('=');
    if (equals == std::string::npos) throw_file_error(path, "@settings", "malformed: " + field);
    c.compatibility.emplace_back(field.substr(0, equals), field.substr(equals + 1));
  }
  const int64_t params = file.read_int_attribute("num_params");
  if (params < 0) throw_file_error(path, "@num_params", "is negative");
  // Read before the header checksum, which covers them (the bundle through its checksum).
  int64_t dual_next = 0;
  if (version >= 3) {
    c.state.smoothing = file.read_double_attribute("smoothing");
    dual_next = read_dual_bundle(file, path, params, c.state.dual_bundle);
  }
  // Trees (a trees class's) before the header checksum, which covers theirs.
  if (file.has_attribute("checksum_trees")) {
    c.state.trees = read_ensembles(file);
    if (trees_checksum(c.state.trees) != file.read_string_attribute("checksum_trees"))
      throw_file_error(path, "/trees", "checksum mismatch (the file is corrupt)");
  }
  // The stochastic learners' iterate, before the header checksum, which covers its own.
  if (file.has_attribute("checksum_iterate")) {
    c.state.steps = file.read_int_attribute("steps");
    if (file.length("/stochastic/iterate") != params)
      throw_file_error(path, "/stochastic/iterate",
                       "holds " + std::to_string(file.length("/stochastic/iterate")) +
                           " values, not the " + std::to_string(params) + " parameters");
    c.state.iterate = file.read<double>("/stochastic/iterate", 0, params);
    if (iterate_checksum(c.state) != file.read_string_attribute("checksum_iterate"))
      throw_file_error(path, "/stochastic/iterate", "checksum mismatch (the file is corrupt)");
  }
  read_validation(file, path, params, c.state.validation);
  const std::string theta_checksum = file.read_string_attribute("checksum_theta");
  const std::string memory_checksum =
      version == 1 ? "" : file.read_string_attribute("checksum_lbfgs");
  if (text_checksum(header_text(
          c, c.state, version, params, file.read_int_attribute("message_entries"), theta_checksum,
          file.read_string_attribute("checksum_messages"), memory_checksum, dual_next)) !=
      file.read_string_attribute("checksum_header"))
    throw_file_error(path, "@checksum_header", "header checksum mismatch (the file is corrupt)");
  if (c.state.dual_bundle.weights.size() != c.state.dual_bundle.size())
    ring_bundle_in_order(c.state.dual_bundle, dual_next, params);
  c.num_params = params;
  c.theta_checksum = theta_checksum;
  c.lbfgs_checksum = memory_checksum;
  // Version 1 was written before --theta-step existed, always by the gradient step.
  if (version == 1) c.compatibility.emplace_back("theta_step", "gradient");
  c.provenance = read_provenance(file);
  return c;
}

void read_checkpoint_vectors(const std::string& path, Checkpoint& c, int memory_pairs) {
  const h5::File file = h5::File::open_read(path);
  if (file.length("/theta") != c.num_params)
    throw_file_error(path, "/theta",
                     "holds " + std::to_string(file.length("/theta")) + " values, not the " +
                         std::to_string(c.num_params) + " of @num_params");
  c.state.theta = file.read<double>("/theta", 0, c.num_params);
  if (hex_checksum(kThetaTag, 0, c.state.theta, nullptr) != c.theta_checksum)
    throw_file_error(path, "/theta", "checksum mismatch (the file is corrupt)");
  if (c.lbfgs_checksum.empty()) return;  // version 1: no memory
  read_lbfgs_memory(file, path, c.num_params, memory_pairs, c.state.lbfgs);
  if (lbfgs_checksum(c.state.lbfgs, c.num_params) != c.lbfgs_checksum)
    throw_file_error(path, "/lbfgs", "checksum mismatch (the file is corrupt)");
}

void check_checkpoint_params(const std::string& path, const Checkpoint& c, int64_t num_params) {
  if (c.num_params != num_params)
    throw_file_error(
        path, "@num_params",
        "is " + std::to_string(c.num_params) + ", the data has " + std::to_string(num_params));
}

Checkpoint read_checkpoint_header(const std::string& path, int64_t num_params, Communicator& comm) {
  Checkpoint c;
  run_collectively(comm, [&] {
    c = read_checkpoint_file_header(path);
    check_checkpoint_params(path, c, num_params);
    read_checkpoint_vectors(path, c, 0);
  });
  return c;
}

void read_checkpoint_messages(const std::string& path, std::vector<double>& local_messages,
                              Communicator& comm) {
  read_checkpoint_messages(path, local_messages, comm,
                           contiguous_runs(static_cast<int64_t>(local_messages.size()), comm));
}

void read_checkpoint_messages(const std::string& path, std::vector<double>& local_messages,
                              Communicator& comm, const MessageRuns& runs) {
  std::string stored;
  run_collectively(comm, [&] {
    const h5::File file = h5::File::open_read(path);
    if (file.read_int_attribute("message_entries") != runs.total)
      throw_file_error(path, "@message_entries",
                       "is " + std::to_string(file.read_int_attribute("message_entries")) +
                           ", the data needs " + std::to_string(runs.total));
    for (const ArrayRun& run : runs.read) {
      const std::vector<double> values = file.read<double>("/messages", run.file, run.count);
      std::copy(values.begin(), values.end(), local_messages.begin() + run.local);
    }
    stored = file.read_string_attribute("checksum_messages");
  });
  const std::string computed = messages_checksum(kMessageTag, runs, local_messages, comm);
  run_collectively(comm, [&] {
    if (computed != stored)
      throw_file_error(path, "/messages", "checksum mismatch (the file is corrupt)");
  });
}

}  // namespace pdsp
