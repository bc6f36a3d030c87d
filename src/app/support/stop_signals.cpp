#include "pdsp/app/stop_signals.hpp"

#include <unistd.h>

#include <csignal>
#include <initializer_list>

namespace pdsp {
namespace {

volatile std::sig_atomic_t g_signals = 0;

void on_stop_signal(int) {
  g_signals = g_signals + 1;
  if (g_signals >= 2) {
    constexpr char message[] = "pdsp: second signal, exiting now\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(kExitInterrupted);
  }
  constexpr char message[] = "pdsp: stop requested, finishing this iteration\n";
  (void)!::write(STDERR_FILENO, message, sizeof message - 1);
}

}  // namespace

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGINT, SIGUSR1}) sigaction(signal, &action, nullptr);
}

bool stop_signal_received() {
  return g_signals > 0;
}

}  // namespace pdsp
