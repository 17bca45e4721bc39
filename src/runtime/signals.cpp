// Async-signal-safe stop flag: the handler only stores the signal number; everything else (agreeing
// across ranks, checkpointing, exiting) happens on the training thread.
#include "runtime/signals.h"

#include <csignal>
#include <initializer_list>

namespace ft {
namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }
}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal : {SIGUSR1, SIGTERM, SIGINT}) sigaction(signal, &action, nullptr);
}

int stop_requested() { return g_stop_signal; }
void clear_stop_request() { g_stop_signal = 0; }

}  // namespace ft
