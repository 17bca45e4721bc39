// Async-signal-safe stop flag: the handler only stores the signal number; everything else (agreeing
// across ranks, checkpointing, exiting) happens on the training thread.
#include "runtime/signals.h"

#include <csignal>
#include <cstdlib>
#include <initializer_list>

#include "runtime/error.h"

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

int stop_requested_after(std::int64_t completed_steps) {
  static const std::int64_t stop_at = [] {
    const char* text = std::getenv("FUSETRAIN_TEST_STOP_AT_STEP");
    if (text == nullptr || *text == '\0') return std::int64_t{-1};
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    FT_REQUIRE(*end == '\0' && value > 0, "FUSETRAIN_TEST_STOP_AT_STEP must be a positive step count, got '",
               text, "'");
    return static_cast<std::int64_t>(value);
  }();
  if (g_stop_signal != 0) return g_stop_signal;
  return completed_steps == stop_at ? SIGUSR1 : 0;
}
void clear_stop_request() { g_stop_signal = 0; }

}  // namespace ft
