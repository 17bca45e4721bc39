// The progress line's text (step, throughput, loss, times left) and its output: rewritten in place on a
// terminal, plain lines at an interval elsewhere, never a carriage return in a file.
#include "monitor/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "monitor/terminal.h"
#include "runtime/error.h"

namespace ft {
namespace {

constexpr double kTerminalRefreshS = 1.0;

std::string two_digits(long long n) { return n < 10 ? cat("0", n) : cat(n); }

}  // namespace

std::string duration_text(double seconds) {
  const long long s = std::llround(std::max(0.0, seconds));
  if (s < 60) return cat(s, "s");
  if (s < 3600) return cat(s / 60, "m", two_digits(s % 60), "s");
  return cat(s / 3600, "h", two_digits(s % 3600 / 60), "m");
}

std::string progress_text(const ProgressSetup& setup, const ProgressPoint& p) {
  const double per_step = p.steps_timed > 0 ? p.seconds / static_cast<double>(p.steps_timed) : 0;
  const auto images = static_cast<double>(p.steps_timed * setup.images_per_step);
  const double images_per_s = p.seconds > 0 ? images / p.seconds : 0;
  const double epoch_left = static_cast<double>(setup.steps_per_epoch - p.step) * per_step;
  const double later_epochs = static_cast<double>(setup.epochs - p.epoch) *
                              (static_cast<double>(setup.steps_per_epoch) * per_step + p.epoch_overhead_s);
  const double run_left = epoch_left + p.epoch_overhead_s + later_epochs;
  const long long percent = setup.steps_per_epoch > 0 ? 100 * p.step / setup.steps_per_epoch : 0;
  char numbers[96];
  std::snprintf(numbers, sizeof(numbers), "%.0f img/s  loss %.4f", images_per_s, p.loss);
  return cat("progress: epoch ", p.epoch, "/", setup.epochs, " step ", p.step, "/", setup.steps_per_epoch, " (",
             percent, "%)  ", numbers, "  ETA epoch ", duration_text(epoch_left), ", run ", duration_text(run_left));
}

Progress::Progress(const ProgressSetup& setup) : setup_(setup) {}

Progress::~Progress() { clear(); }

bool Progress::due() const {
  if (setup_.every_s <= 0) return false;
  return since_shown_.seconds() >= (setup_.terminal ? std::min(kTerminalRefreshS, setup_.every_s) : setup_.every_s);
}

void Progress::show(const ProgressPoint& point) {
  std::string text = progress_text(setup_, point);
  since_shown_.reset();
  if (!setup_.terminal) {
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
    return;
  }
  const int columns = terminal_columns();
  const auto width_limit = static_cast<std::size_t>(std::max(0, columns - 1));  // the last column would wrap
  if (columns > 1 && text.size() > width_limit) text.resize(width_limit);
  const std::size_t width = text.size();
  if (width < shown_width_) text.append(shown_width_ - width, ' ');  // covers the longer line before
  std::printf("\r%s", text.c_str());
  std::fflush(stdout);
  shown_width_ = width;
}

void Progress::clear() {
  since_shown_.reset();
  if (shown_width_ == 0) return;
  std::printf("\r%s\r", std::string(shown_width_, ' ').c_str());
  std::fflush(stdout);
  shown_width_ = 0;
}

}  // namespace ft
