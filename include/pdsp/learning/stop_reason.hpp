#pragma once
// Why a learner stopped: a kind that the code decides by (whether a resumed run stays finished,
// the exit code) and the sentence that the log, the metrics and the model file carry. Every
// learner reports one; nothing reads the kind back out of the text, except a checkpoint written
// before kinds were stored (`final_stop_from_text`).
#include <string>

#include "pdsp/parallel/communicator.hpp"

namespace pdsp {

inline constexpr int kExitRequeue = 75;       // checkpointed: run the same command to continue
inline constexpr int kExitInterrupted = 130;  // stopped by a signal without a checkpoint

enum class StopKind {
  None,            // still running
  Converged,       // an optimality test passed (a certified gap, a gradient norm)
  SmallChange,     // the objective moved less than --tol: a reason to stop, not a proof
  IterationLimit,  // --max-iters
  TimeLimit,       // --max-seconds
  Signal,          // SIGINT / SIGTERM without a checkpoint to continue from
  NoProgress,      // the learner cannot go on (no step decreased the objective, an invalid
                   // evaluation at the start or after every retry): the model is its last
                   // valid point
  Requested,       // an observer ended the run (a checkpoint before the wall-time limit)
};

struct StopReason {
  StopKind kind = StopKind::None;
  std::string text;

  bool stops() const { return kind != StopKind::None; }
  // Training ended for good: a checkpoint taken after it resumes into the same stop (unless
  // the setting that ended it changed). An iteration limit is not final: a resumed run with a
  // larger one goes on.
  bool is_final() const {
    return kind == StopKind::Converged || kind == StopKind::SmallChange ||
           kind == StopKind::TimeLimit;
  }
  int exit_code() const { return kind == StopKind::Signal ? kExitInterrupted : 0; }

  bool operator==(const StopReason&) const = default;
};

inline StopReason no_stop() {
  return {};
}
inline StopReason stop_converged(std::string text) {
  return {StopKind::Converged, std::move(text)};
}
inline StopReason stop_small_change(std::string text) {
  return {StopKind::SmallChange, std::move(text)};
}
inline StopReason stop_iteration_limit() {
  return {StopKind::IterationLimit, "max-iters"};
}
inline StopReason stop_time_limit() {
  return {StopKind::TimeLimit, "time limit"};
}
inline StopReason stop_signal() {
  return {StopKind::Signal, "stop requested by a signal"};
}
inline StopReason stop_no_progress(std::string text) {
  return {StopKind::NoProgress, std::move(text)};
}
inline StopReason stop_by_observer(std::string text) {
  return {StopKind::Requested, std::move(text)};
}

// The final stop a checkpoint stores as its text (checkpoint files keep the sentence only): the
// leading words of the three final kinds' sentences. An unknown non-empty text is taken as a
// small change, which a resume with another --tol reopens.
StopReason final_stop_from_text(const std::string& text);

// The stops the learners share, the same on every rank (one allreduce of the largest values): a
// signal raised on any rank, then training time `elapsed` at `max_seconds` or more (0: no
// limit), then `iteration` at `max_iterations`; no stop otherwise. Collective.
StopReason limit_or_signal(Communicator& comm, bool signalled, double elapsed, double max_seconds,
                           int iteration, int max_iterations);

}  // namespace pdsp
