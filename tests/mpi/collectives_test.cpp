// Broadcast, all-gather and barrier on real ranks for every host backend, the MPI backend's chunked paths,
// collectives on a communication thread while the main thread uses the world communicator, and the world's
// joining of a running MPI, its sleeping barrier and its timeout.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_backend.h"
#include "mpi_env.h"

namespace ft {
namespace {

std::uint8_t pattern(int rank, std::size_t i) { return static_cast<std::uint8_t>(i * 31 + rank * 7 + 1); }

std::size_t broadcast_errors(Backend& backend, std::size_t bytes, int root) {
  std::vector<std::uint8_t> data(bytes + 1, 0xee);
  if (backend.rank() == root)
    for (std::size_t i = 0; i < bytes; ++i) data[i] = pattern(root, i);
  backend.broadcast(data.data(), bytes, root);
  std::size_t errors = data[bytes] != 0xee;
  for (std::size_t i = 0; i < bytes; ++i) errors += data[i] != pattern(root, i);
  return errors;
}

std::size_t allgather_errors(Backend& backend, std::size_t bytes, bool in_place) {
  const int size = backend.size(), rank = backend.rank();
  std::vector<std::uint8_t> out(bytes * size + 1, 0xee);
  std::vector<std::uint8_t> in(bytes);
  for (std::size_t i = 0; i < bytes; ++i) in[i] = pattern(rank, i);
  if (in_place) {
    std::copy(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(rank * bytes));
    backend.allgather(out.data() + rank * bytes, out.data(), bytes);
  } else {
    backend.allgather(in.data(), out.data(), bytes);
  }
  std::size_t errors = out[bytes * size] != 0xee;
  for (int r = 0; r < size; ++r)
    for (std::size_t i = 0; i < bytes; ++i) errors += out[r * bytes + i] != pattern(r, i);
  return errors;
}

class HostCollectives : public ::testing::TestWithParam<std::string> {};

TEST_P(HostCollectives, BroadcastFromEveryRoot) {
  Backend& backend = test::shared_backend(GetParam());
  for (int root = 0; root < backend.size(); ++root)
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{1000003}})
      EXPECT_EQ(broadcast_errors(backend, bytes, root), 0u) << "root " << root << ", " << bytes << " bytes";
}

TEST_P(HostCollectives, AllGather) {
  Backend& backend = test::shared_backend(GetParam());
  for (bool in_place : {false, true})
    for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100003}})
      EXPECT_EQ(allgather_errors(backend, bytes, in_place), 0u) << bytes << " bytes, in place " << in_place;
}

TEST_P(HostCollectives, BarrierRepeats) {
  Backend& backend = test::shared_backend(GetParam());
  for (int i = 0; i < 5; ++i) EXPECT_NO_THROW(backend.barrier());
}

// No rank leaves a barrier before the last one has entered it: the last rank arrives 0.3 s late, and every rank's
// leaving time is compared with that arrival on the host's monotonic clock (the ranks of a test share one host).
TEST_P(HostCollectives, BarrierWaitsForTheLastRank) {
  Backend& backend = test::shared_backend(GetParam());
  const World& world = test::world();
  const auto now_s = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const bool last = backend.rank() == backend.size() - 1;
  if (last) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double arrived = now_s();
  backend.barrier();
  const double left = now_s();
  const double last_arrived = world.allreduce_max(last ? arrived : 0.0);
  EXPECT_GE(left, last_arrived) << "rank " << backend.rank() << " left " << last_arrived - left << " s early";
}

// The engine's layout: collectives on a communication thread, control-plane reductions on the main
// thread over the world communicator, at the same time.
TEST_P(HostCollectives, ConcurrentWithWorldOnMainThread) {
  Backend& backend = test::shared_backend(GetParam());
  const World& world = test::world();
  constexpr int kRounds = 30;
  std::size_t errors = 0;
  std::thread communication([&] {
    std::vector<float> data(10000);
    for (int round = 0; round < kRounds; ++round) {
      std::fill(data.begin(), data.end(), static_cast<float>(backend.rank() + round));
      backend.allreduce(data.data(), data.size(), DType::kFloat32);
      const float expected = static_cast<float>(backend.size() * (backend.size() - 1) / 2 + backend.size() * round);
      for (float value : data) errors += value != expected;
    }
  });
  double main_errors = 0;
  for (int round = 0; round < kRounds; ++round)
    main_errors += world.allreduce_sum(static_cast<double>(round)) != round * world.size();
  communication.join();
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(main_errors, 0);
}

INSTANTIATE_TEST_SUITE_P(HostBackends, HostCollectives, ::testing::ValuesIn(test::host_backends()),
                         [](const auto& backend) { return backend.param; });

// Broadcast and all-gather in several chunks of 400000 bytes (the all-gather ones placed with a resized
// datatype), with remainders.
TEST(MpiChunks, BroadcastAndAllGatherAcrossChunkBoundaries) {
  BackendOptions options;
  options.stall_timeout_s = 20;
  MpiBackend backend(test::world(), options, 400000);
  EXPECT_EQ(broadcast_errors(backend, 1000003, backend.size() - 1), 0u);
  EXPECT_EQ(allgather_errors(backend, 1000003, false), 0u);
  EXPECT_EQ(allgather_errors(backend, 1000003, true), 0u);
}

TEST(MakeBackend, RejectsABadBroadcastRoot) {
  Backend& backend = test::shared_backend("mpi");
  std::uint8_t byte = 0;
  EXPECT_THROW(backend.broadcast(&byte, 1, backend.size()), Error);
}

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// A world made where MPI already runs (a host program's, or a test's) joins it: the same ranks and thread level,
// its own communicator, and MPI still running after it is gone, for the world that initialised it.
TEST(WorldInit, ASecondWorldJoinsTheRunningMpiAndLeavesItRunning) {
  const World& first = test::world();
  {
    World second(nullptr, nullptr);
    EXPECT_EQ(second.rank(), first.rank());
    EXPECT_EQ(second.size(), first.size());
    EXPECT_EQ(second.thread_multiple(), first.thread_multiple());
    EXPECT_NE(second.comm(), first.comm());
    const std::vector<std::string> ranks = second.allgather(std::to_string(second.rank()));
    for (int r = 0; r < first.size(); ++r) EXPECT_EQ(ranks[r], std::to_string(r));
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  EXPECT_EQ(finalized, 0) << "a world that joined MPI finalised it";
  EXPECT_EQ(static_cast<int>(first.allgather("still here").size()), first.size());
}

// The last rank comes 80 ms late: the others wait for it (a barrier), and sleep while they do: a few ms of their
// CPU at most, where yielding for the first 20 ms, as the plain barrier does, takes up to 20 ms on an idle core.
// (Each of the ~80 sleeping polls costs 10-70 us of CPU, the most on a loaded machine: 150 ms late, 10.4 ms was
// measured once beside a mutation run and a build, so the wait is kept short.)
TEST(WorldBarrier, TheSleepingOneWaitsForTheLastRankWithoutSpinning) {
  const World& world = test::world();
  world.barrier();
  if (world.rank() == world.size() - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    world.barrier_sleeping();
    return;
  }
  const double cpu = thread_cpu_s();
  const auto start = std::chrono::steady_clock::now();
  world.barrier_sleeping();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double spent = thread_cpu_s() - cpu;
  EXPECT_GE(waited, 0.05) << "rank " << world.rank() << " left the barrier before the last rank came";
  EXPECT_LT(spent, 0.01) << "rank " << world.rank() << " spent " << spent << " s of CPU in " << waited << " s";
}

// A timeout under a second bounds the world's collectives as any other does (the rule is "more than 0 s"): the
// last rank joins 1.5 s late, the others give up after 0.25 s; the last finds the barrier the others posted.
TEST(WorldTimeout, AFractionOfASecondBoundsACollective) {
  const World& world = test::world();
  World control(world.comm());  // its own communicator: it is unusable after the timeout
  control.set_timeout(0.25);
  world.barrier();
  if (world.rank() == world.size() - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    control.barrier();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    control.barrier_sleeping();
    FAIL() << "rank " << world.rank() << ": the barrier completed without the last rank";
  } catch (const StallError& e) {  // names the collective, its size and the rank
    EXPECT_NE(std::string(e.what()).find("barrier (0 B, mpi) waited"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("on rank " + std::to_string(world.rank())), std::string::npos) << e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.2) << "rank " << world.rank() << " gave up before its timeout";
  EXPECT_LT(waited, 1.2) << "rank " << world.rank() << " waited for the late rank instead of its 0.25 s";
  try {  // and refuses at once what comes after, naming why
    control.barrier();
    ADD_FAILURE() << "rank " << world.rank() << ": a barrier completed on a world that had timed out";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unusable after an earlier failure"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
