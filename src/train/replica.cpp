// Loading a rank's slices and building its replica: the same seed, the same data-fitted layers and one
// broadcast make every rank start from rank 0's weights; running statistics are averaged before scoring.
#include "train/replica.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "comm/stall_inspector.h"
#include "models/channels_last.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "shard/shard_reader.h"
#include "optim/precision.h"
#include "optim/rank_streams.h"

namespace ft {
namespace {

std::int64_t limited(std::int64_t total, std::int64_t limit) { return limit > 0 ? std::min(total, limit) : total; }

// Copies every parameter and buffer from rank 0 so all replicas start identical.
void broadcast_state(Network& net, const World& world) {
  std::vector<at::Tensor> tensors;
  for (const auto& p : net.parameters()) tensors.push_back(p);
  for (const auto& b : net.buffers()) tensors.push_back(b);
  at::NoGradGuard no_grad;
  for (auto& t : tensors) {
    auto host = t.detach().to(at::kCPU).contiguous().clone();
    world.broadcast_bytes(host.data_ptr(), static_cast<std::size_t>(host.numel() * host.element_size()));
    t.detach().copy_(host);
  }
}

// Layers fitted to the data (fast_cifar's whitening) see un-augmented, normalised training images: at most
// 5000, and at most 64 MiB of them. Rank 0's result is what the broadcast keeps.
void fit_to_data(Network& net, const Config& config, const DeviceDataset& train, at::ScalarType param_dtype) {
  const auto& meta = train.meta();
  const std::int64_t per_image = std::int64_t{meta.channels} * meta.height * meta.width * 4;
  const std::int64_t n =
      std::min({train.size(), std::int64_t{5000}, std::max<std::int64_t>(1, (64 << 20) / per_image)});
  auto plain = train.augment_params(0, false, 0, config.data.normalize);
  plain.train = false;
  const auto idx = at::arange(n, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  net.initialize_from_data(train.batch(idx, plain, 0, param_dtype, false).first);
}

}  // namespace

RankSplits load_rank_splits(const Config& c, const World& world, at::Device device) {
  const ShardReader train_reader(c.data.path, "train");
  const ShardReader test_reader(c.data.path, "test");
  const std::int64_t train_total = limited(train_reader.total(), c.data.limit_train);
  const std::int64_t test_total = limited(test_reader.total(), c.data.limit_test);
  FT_REQUIRE(world.size() <= test_total, world.size(), " ranks but the test split has only ", test_total,
             " images: use fewer ranks");
  const bool global = c.data.shuffle == Shuffle::global;
  const auto train_range = global ? std::pair<std::int64_t, std::int64_t>{0, train_total}
                                  : slice_of(train_total, world.rank(), world.size());
  const auto test_range = c.distributed.reproducible ? std::pair<std::int64_t, std::int64_t>{0, test_total}
                                                     : slice_of(test_total, world.rank(), world.size());
  const HostSplit host_train = train_reader.read(train_range.first, train_range.second);
  const HostSplit host_test = test_reader.read(test_range.first, test_range.second);
  const ShardMeta &a = host_train.meta, &b = host_test.meta;
  FT_REQUIRE(a.height == b.height && a.width == b.width && a.channels == b.channels, "data.path ", c.data.path,
             ": test images are ", b.height, "x", b.width, "x", b.channels, " but train images are ", a.height, "x",
             a.width, "x", a.channels);
  return {std::make_unique<DeviceDataset>(host_train, device), std::make_unique<DeviceDataset>(host_test, device),
          train_reader.meta()};
}

std::shared_ptr<Network> build_replica(const Config& config, const DeviceDataset& train, const World& world,
                                       at::Device device, at::ScalarType param_dtype) {
  const auto& meta = train.meta();
  const InputShape shape{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  at::manual_seed(config.train.seed);
  auto network = make_network(config.model, shape);
  network->to(device, param_dtype);
  fit_to_data(*network, config, train, param_dtype);
  if (config.precision.half_weights) use_half_weights(*network, training_dtype(config.precision.dtype));
  // Every replica starts from rank 0's weights (below) but draws its own dropout masks from here on.
  seed_rank_streams(config.train.seed, world.rank());
  if (config.precision.channels_last) use_channels_last(*network);
  broadcast_state(*network, world);
  return network;
}

// Running statistics drift apart between replicas, each seeing its own batches (they never enter a gradient).
// Integer buffers (batch counts) are equal on every rank.
void average_running_statistics(Network& net, const World& world) {
  if (world.size() == 1) return;
  std::vector<at::Tensor> buffers;
  for (const auto& b : net.buffers())
    if (b.is_floating_point()) buffers.push_back(b);
  if (buffers.empty()) return;
  std::vector<at::Tensor> flat;
  for (const auto& b : buffers) flat.push_back(b.detach().to(at::kCPU, at::kDouble).reshape(-1));
  auto host = at::cat(flat).contiguous();
  {
    const CollectiveLabel label("batch-norm running statistics");
    world.allreduce_sum(host.data_ptr<double>(), static_cast<int>(host.numel()));
  }
  host.div_(world.size());
  at::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& b : buffers) {
    b.detach().copy_(host.narrow(0, offset, b.numel()).view(b.sizes()));
    offset += b.numel();
  }
}

}  // namespace ft
