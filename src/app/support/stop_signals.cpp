#include "pdsp/app/stop_signals.hpp"

#include <unistd.h>

#include <csignal>
#include <ctime>
#include <initializer_list>

namespace pdsp {
namespace {

volatile std::sig_atomic_t g_signals = 0;
volatile std::sig_atomic_t g_announce = 1;  // only one rank prints
volatile std::sig_atomic_t g_first_signal_second = 0;

// Monotonic seconds; clock_gettime is async-signal-safe.
long now_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long>(now.tv_sec);
}

// Launchers forward a preemption signal to every rank while the scheduler also signals each
// process, so one request often arrives twice at once: only a signal at least two seconds after
// the first counts as the second one.
void on_stop_signal(int) {
  if (g_signals == 0) {
    g_signals = 1;
    g_first_signal_second = static_cast<std::sig_atomic_t>(now_seconds());
    constexpr char message[] = "pdsp: stop requested, finishing this iteration\n";
    if (g_announce) (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    return;
  }
  if (now_seconds() - g_first_signal_second < 2) return;
  constexpr char message[] = "pdsp: second signal, exiting now\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
  ::_exit(kExitInterrupted);
}

}  // namespace

void install_stop_signals(bool announce) {
  g_announce = announce ? 1 : 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGINT, SIGUSR1}) sigaction(signal, &action, nullptr);
}

void ignore_stop_signals() {
  for (int signal : {SIGTERM, SIGINT, SIGUSR1}) std::signal(signal, SIG_IGN);
}

bool stop_signal_received() {
  return g_signals > 0;
}

}  // namespace pdsp
