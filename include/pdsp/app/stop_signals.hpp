#pragma once
// SIGTERM, SIGINT and SIGUSR1 (what schedulers send before preempting a job) ask training to
// stop: the request travels in the next allreduce, every rank checkpoints at the same iteration
// and pdsp exits with kExitRequeue. A second signal (two seconds or more after the first) ends
// the process at once. The exit codes are in learning/stop_reason.hpp.
#include "pdsp/learning/stop_reason.hpp"

namespace pdsp {

// `announce`: whether this process prints the first request (rank 0 only).
void install_stop_signals(bool announce);
bool stop_signal_received();
// For a process that is leaving after an error every rank saw: the launcher may terminate the
// ranks still finishing, and a "stop requested" line would then follow the error line.
void ignore_stop_signals();

}  // namespace pdsp
