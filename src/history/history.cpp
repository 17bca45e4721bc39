// Overfitting and early-stopping rules over evaluated epochs only (epochs without evaluation are
// skipped), so that eval_every > 1 does not distort the windows.
#include "history/history.h"

namespace ft {
namespace {

std::vector<const EpochRecord*> evaluated(const std::vector<EpochRecord>& epochs) {
  std::vector<const EpochRecord*> out;
  for (const auto& e : epochs)
    if (e.evaluated) out.push_back(&e);
  return out;
}

}  // namespace

int overfitting_onset(const std::vector<EpochRecord>& epochs, int window) {
  const auto e = evaluated(epochs);
  int run = 0;
  for (std::size_t i = 1; i < e.size(); ++i) {
    const bool diverging = e[i]->test_loss > e[i - 1]->test_loss && e[i]->train_loss < e[i - 1]->train_loss;
    run = diverging ? run + 1 : 0;
    if (run >= window) return e[i + 1 - static_cast<std::size_t>(window)]->epoch;
  }
  return 0;
}

bool should_stop_early(const std::vector<EpochRecord>& epochs, int patience) {
  if (patience <= 0) return false;
  const auto e = evaluated(epochs);
  if (e.size() <= static_cast<std::size_t>(patience)) return false;
  double best_before = e.front()->test_loss;
  const std::size_t split = e.size() - static_cast<std::size_t>(patience);
  for (std::size_t i = 1; i < split; ++i)
    if (e[i]->test_loss < best_before) best_before = e[i]->test_loss;
  for (std::size_t i = split; i < e.size(); ++i)
    if (e[i]->test_loss < best_before) return false;
  return true;
}

}  // namespace ft
