// The hierarchical all-reduce against the flat one on real ranks grouped into test nodes: every dtype,
// sizes across chunk boundaries and scattered spans must give the same bits, and the factory must pick
// the hierarchy exactly where the world spans several nodes with several ranks on some.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "comm/half.h"
#include "comm/mpi_hierarchical.h"
#include "element_store.h"
#include "mpi_env.h"

namespace ft {
namespace {

using test::store;

constexpr int kRanksPerNode = 2;
constexpr std::size_t kSmallChunkBytes = 400000;  // several chunks per stage for the larger counts

// Small integers, exact in every dtype and in every sum over up to 4 ranks (uint8 stays below 256).
double value(int rank, std::size_t i) { return static_cast<double>((i * 7 + static_cast<std::size_t>(rank)) % 23); }

std::vector<unsigned char> filled(DType dtype, int rank, std::size_t count) {
  std::vector<unsigned char> buffer(count * dtype_size(dtype));
  for (std::size_t i = 0; i < count; ++i) store(dtype, buffer.data(), i, value(rank, i));
  return buffer;
}

std::vector<unsigned char> exact_sum(DType dtype, int size, std::size_t count) {
  std::vector<unsigned char> buffer(count * dtype_size(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    double sum = 0;
    for (int r = 0; r < size; ++r) sum += value(r, i);
    store(dtype, buffer.data(), i, sum);
  }
  return buffer;
}

std::unique_ptr<HierarchicalMpiBackend> hierarchical(std::size_t chunk_bytes = kSmallChunkBytes,
                                                     MpiAlgorithm algorithm = MpiAlgorithm::automatic) {
  BackendOptions options;
  options.stall_timeout_s = 20;
  options.mpi_algorithm = algorithm;
  auto nodes = std::make_unique<NodeComms>(test::world().comm(), NodeGrouping{kRanksPerNode});
  return std::make_unique<HierarchicalMpiBackend>(test::world(), options, std::move(nodes), chunk_bytes);
}

TEST(Hierarchical, NodesFollowTheGrouping) {
  const World& world = test::world();
  NodeComms nodes(world.comm(), NodeGrouping{kRanksPerNode});
  EXPECT_EQ(nodes.node_count(), (world.size() + kRanksPerNode - 1) / kRanksPerNode);
  EXPECT_EQ(nodes.local_rank(), world.rank() % kRanksPerNode);
  EXPECT_EQ(nodes.local_size(), std::min(kRanksPerNode, world.size() - world.rank() / kRanksPerNode * kRanksPerNode));
  EXPECT_EQ(nodes.leaders() != MPI_COMM_NULL, nodes.local_rank() == 0);
}

TEST(Hierarchical, MatchesFlatForEveryDtype) {
  const World& world = test::world();
  auto tiered = hierarchical();
  Backend& flat = test::shared_backend("mpi");
  EXPECT_EQ(tiered->allreduce_algorithm(), AllreduceAlgorithm::hierarchical);
  EXPECT_EQ(flat.allreduce_algorithm(), AllreduceAlgorithm::flat);
  for (const DTypeTraits& traits : kDTypeTable) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1023}, std::size_t{300007}}) {
      auto flat_result = filled(traits.dtype, world.rank(), count);
      auto tiered_result = flat_result;
      flat.allreduce(flat_result.data(), count, traits.dtype);
      tiered->allreduce(tiered_result.data(), count, traits.dtype);
      EXPECT_TRUE(tiered_result == flat_result) << traits.name << " x " << count;
      EXPECT_TRUE(tiered_result == exact_sum(traits.dtype, world.size(), count)) << traits.name << " x " << count;
    }
  }
}

// The leaders' step as a ring (reduce, ring, broadcast one after another) against MPI_Iallreduce.
TEST(Hierarchical, LeadersRingMatchesNative) {
  const World& world = test::world();
  auto ring = hierarchical(kSmallChunkBytes, MpiAlgorithm::ring);
  auto native = hierarchical(kSmallChunkBytes, MpiAlgorithm::native);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt64})
    for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{300007}}) {
      auto by_ring = filled(dtype, world.rank(), count), by_native = by_ring;
      ring->allreduce(by_ring.data(), count, dtype);
      native->allreduce(by_native.data(), count, dtype);
      EXPECT_TRUE(by_ring == by_native) << dtype_name(dtype) << " x " << count;
      EXPECT_TRUE(by_ring == exact_sum(dtype, world.size(), count)) << dtype_name(dtype) << " x " << count;
    }
}

TEST(Hierarchical, SpansMatchFlat) {
  const World& world = test::world();
  auto tiered = hierarchical();
  EXPECT_TRUE(tiered->reduces_spans_in_place());
  const std::vector<std::size_t> counts = {3, 0, 70000, 1, 20000, 300000, 2};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    std::vector<std::vector<unsigned char>> buffers;
    std::vector<HostSpan> spans;
    for (std::size_t count : counts) {
      buffers.push_back(filled(dtype, world.rank(), count));
      spans.push_back({buffers.back().data(), count});
    }
    tiered->allreduce_spans(spans, dtype);
    for (std::size_t s = 0; s < counts.size(); ++s)
      EXPECT_TRUE(buffers[s] == exact_sum(dtype, world.size(), counts[s])) << dtype_name(dtype) << " span " << s;
  }
}

TEST(Hierarchical, OtherCollectivesStayCorrect) {
  const World& world = test::world();
  auto tiered = hierarchical();
  std::vector<int> mine = {world.rank() * 10, world.rank() * 10 + 1};
  std::vector<int> all(2 * static_cast<std::size_t>(world.size()));
  tiered->allgather(mine.data(), all.data(), sizeof(int) * 2);
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[2 * r + 1], r * 10 + 1);
  int root_value = world.rank() == world.size() - 1 ? 77 : 0;
  tiered->broadcast(&root_value, sizeof root_value, world.size() - 1);
  EXPECT_EQ(root_value, 77);
  tiered->barrier();
}

// Sets FUSETRAIN_TEST_RANKS_PER_NODE for the life of the object.
class RanksPerNode {
 public:
  explicit RanksPerNode(const char* value) { setenv("FUSETRAIN_TEST_RANKS_PER_NODE", value, 1); }
  ~RanksPerNode() { unsetenv("FUSETRAIN_TEST_RANKS_PER_NODE"); }
};

TEST(Hierarchical, AutoTimesBothOnSeveralNodesAndEveryRankTakesTheSame) {
  const World& world = test::world();
  const RanksPerNode grouping("2");
  BackendOptions options;
  options.stall_timeout_s = 20;
  // 2 ranks are one node: nothing crosses nodes, so the flat all-reduce is kept untimed. On several
  // nodes auto takes whichever was faster here; the choice must be the same on every rank.
  const AllreduceAlgorithm chosen = make_backend(world, options)->allreduce_algorithm();
  if (world.size() <= 2) EXPECT_EQ(chosen, AllreduceAlgorithm::flat);
  double mine = chosen == AllreduceAlgorithm::hierarchical ? 1 : 0;
  EXPECT_EQ(world.allreduce_max(mine), -world.allreduce_max(-mine)) << "ranks chose different algorithms";
  options.allreduce = AllreduceAlgorithm::flat;
  EXPECT_EQ(make_backend(world, options)->allreduce_algorithm(), AllreduceAlgorithm::flat);
  options.allreduce = AllreduceAlgorithm::hierarchical;
  EXPECT_EQ(make_backend(world, options)->allreduce_algorithm(), AllreduceAlgorithm::hierarchical);
}

TEST(Hierarchical, AutoStaysFlatWithOneRankPerNode) {
  const RanksPerNode grouping("1");
  BackendOptions options;
  options.stall_timeout_s = 20;
  EXPECT_EQ(make_backend(test::world(), options)->allreduce_algorithm(), AllreduceAlgorithm::flat);
}

TEST(Hierarchical, RefusesBadSettings) {
  BackendOptions options;
  options.name = BackendName::gloo;
  options.allreduce = AllreduceAlgorithm::hierarchical;
  EXPECT_THROW(make_backend(test::world(), options), Error);
  EXPECT_THROW(choice_from<AllreduceAlgorithm>("distributed.allreduce", "tree"), Error);
  const RanksPerNode grouping("two");
  try {
    NodeGrouping::from_environment();
    ADD_FAILURE() << "a grouping that is not a number was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FUSETRAIN_TEST_RANKS_PER_NODE"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
