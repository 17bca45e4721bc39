// Tags and values of the per-epoch TensorBoard scalars, global and per rank, from the records the
// trainer and the results file share.
#include "monitor/epoch_scalars.h"

#include "runtime/error.h"

namespace ft {

std::vector<Scalar> epoch_scalars(const EpochRecord& r) {
  std::vector<Scalar> out{{"epoch/number", static_cast<double>(r.epoch)},
                          {"epoch/train_loss", r.train_loss},
                          {"epoch/train_acc", r.train_acc}};
  if (r.evaluated) {
    out.push_back({"epoch/test_loss", r.test_loss});
    out.push_back({"epoch/test_acc", r.test_acc});
  }
  out.push_back({"epoch/lr", r.lr});
  out.push_back({"epoch/time_s", r.epoch_time_s});
  out.push_back({"epoch/images_per_s", r.images_per_s});
  return out;
}

std::vector<Scalar> rank_scalars(const std::vector<RankEpochRecord>& rows, int epoch) {
  std::vector<Scalar> out;
  for (const auto& r : rows) {
    if (r.epoch != epoch) continue;
    const std::string rank = cat("rank", r.rank, "/");
    out.push_back({rank + "train_loss", r.train_loss});
    out.push_back({rank + "train_acc", r.train_acc});
    out.push_back({rank + "test_loss", r.test_loss});
    out.push_back({rank + "test_acc", r.test_acc});
  }
  return out;
}

std::vector<Scalar> memory_scalars(double peak_bytes, double peak_allocated_bytes) {
  constexpr double kMiB = 1048576.0;
  return {{"memory/peak_mib", peak_bytes / kMiB}, {"memory/peak_allocated_mib", peak_allocated_bytes / kMiB}};
}

}  // namespace ft
