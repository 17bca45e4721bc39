// Tests of comm/backend.cpp and of every backend on a one-rank world: dtype facts, the factory's
// errors for unknown or unavailable names, and collectives that must be identities when alone.
#include "comm/backend.h"

#include <gtest/gtest.h>

#include <sched.h>

#include <cstring>
#include <memory>
#include <set>
#include <numeric>
#include <vector>

#include "comm/mpi_sum_types.h"
#include "comm/stall_inspector.h"
#include "runtime/collective_watch.h"
#include "runtime/thread_policy.h"
#include "test_world.h"

namespace ft {
namespace {

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DType::kFloat64), 8u);
  EXPECT_EQ(dtype_size(DType::kInt32), 4u);
  EXPECT_EQ(dtype_size(DType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DType::kUInt8), 1u);
  EXPECT_STREQ(dtype_name(DType::kFloat16), "float16");
  EXPECT_STREQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(DType::kFloat32), "float32");
  EXPECT_STREQ(dtype_name(DType::kFloat64), "float64");
  EXPECT_STREQ(dtype_name(DType::kInt32), "int32");
  EXPECT_STREQ(dtype_name(DType::kInt64), "int64");
  EXPECT_STREQ(dtype_name(DType::kUInt8), "uint8");
}

// Names are parsed once, by the config layer; the benchmarks' --backend goes through the same table.
TEST(MakeBackend, UnknownNameIsAnError) {
  try {
    choice_from<BackendName>("--backend", "tcp");
    FAIL() << "accepted 'tcp'";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--backend: 'tcp' is not one of mpi|gloo|nccl");
  }
}

TEST(MakeBackend, StallTimeoutMustBePositive) {
  BackendOptions options;
  options.stall_timeout_s = 0;
  EXPECT_THROW(make_backend(test::world(), options), Error);
}

TEST(MakeBackend, BackendsNotBuiltSaySo) {
  BackendOptions options;
#ifndef FUSETRAIN_WITH_GLOO
  options.name = BackendName::gloo;
  EXPECT_THROW(make_backend(test::world(), options), Error);
#endif
#ifndef FUSETRAIN_WITH_NCCL
  options.name = BackendName::nccl;
  try {
    make_backend(test::world(), options);
    FAIL() << "make_backend built nccl";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backend 'nccl' is not built into this fusetrain"), std::string::npos);
  }
#endif
  SUCCEED();
}

// Alone in the world every collective is an identity (or a copy, for all-gather).
void check_single_rank(BackendName name) {
  BackendOptions options;
  options.name = name;
  options.stall_timeout_s = 5;
  const auto backend = make_backend(test::world(), options);
  EXPECT_EQ(backend->name(), choice_name(name));
  EXPECT_EQ(backend->rank(), 0);
  EXPECT_EQ(backend->size(), 1);
  EXPECT_FALSE(backend->uses_device_memory());

  std::vector<float> values(1001);
  std::iota(values.begin(), values.end(), -500.0f);
  const std::vector<float> expected = values;
  backend->allreduce(values.data(), values.size(), DType::kFloat32);
  EXPECT_EQ(values, expected);
  backend->allreduce(values.data(), 0, DType::kFloat32);

  std::vector<char> bytes = {'a', 'b', 'c'};
  backend->broadcast(bytes.data(), bytes.size(), 0);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "abc");

  std::vector<char> gathered(3);
  backend->allgather(bytes.data(), gathered.data(), bytes.size());
  EXPECT_EQ(gathered, bytes);
  backend->barrier();
}

TEST(SingleRank, Mpi) { check_single_rank(BackendName::mpi); }

#ifdef FUSETRAIN_WITH_GLOO
TEST(SingleRank, Gloo) { check_single_rank(BackendName::gloo); }
#endif

#ifdef FUSETRAIN_WITH_GLOO
// Gloo's TCP event loop must not preempt the collective's thread (see gloo_backend.cpp): its one
// thread runs SCHED_BATCH, and the backend's other threads keep the default policy.
TEST(GlooBackendThreads, EventLoopRunsBatchScheduled) {
  BackendOptions options;
  options.name = BackendName::gloo;
  options.stall_timeout_s = 5;
  std::unique_ptr<Backend> backend;
  const std::set<long> started = threads_started_by([&] { backend = make_backend(test::world(), options); });
  int batch = 0;
  for (long tid : started) batch += sched_getscheduler(static_cast<pid_t>(tid)) == SCHED_BATCH;
  EXPECT_EQ(batch, 1) << started.size() << " threads started";
  EXPECT_NE(sched_getscheduler(0), SCHED_BATCH);
}
#endif

// NCCL's asynchronous errors that mean a peer is gone (ncclSystemError 2, ncclRemoteError 6), and no other.
TEST(TransportFailures, OnlyNcclsSystemAndRemoteErrorsMeanAPeerIsGone) {
  for (int result = 0; result <= 8; ++result)
    EXPECT_EQ(nccl_result_means_peer_lost(result), result == 2 || result == 6) << "ncclResult_t " << result;
  EXPECT_TRUE(nccl_transport_failure(6).peer_lost);
  EXPECT_FALSE(nccl_transport_failure(5).peer_lost);  // ncclInvalidUsage: this rank's own
}

// A planted failure ends the next collective: a lost peer as the StallError the train command turns into exit
// 76 (on one rank nobody is silent, which the diagnosis says), anything else as a plain error; the backend is
// unusable afterwards, naming the failure.
TEST(TransportFailures, APlantedFailureEndsTheNextCollective) {
  BackendOptions options;
  options.stall_timeout_s = 0.5;
  const auto lost = make_backend(test::world(), options);
  lost->plant_transport_failure(nccl_transport_failure(6));
  float x = 1;
  try {
    lost->allreduce(&x, 1, DType::kFloat32);
    FAIL() << "the planted failure did not end the collective";
  } catch (const StallError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("all-reduce #1 (4 B, mpi) failed: the mpi transport lost a peer: every rank has started it"),
              std::string::npos)
        << text;
  }
  EXPECT_THROW(lost->barrier(), Error);
  const auto own = make_backend(test::world(), options);
  own->plant_transport_failure(nccl_transport_failure(5));
  try {
    own->allreduce(&x, 1, DType::kFloat32);
    FAIL() << "the planted failure did not end the collective";
  } catch (const StallError& e) {
    FAIL() << "this rank's own failure was taken for a lost peer: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all-reduce #1 (4 B, mpi) failed: "), std::string::npos) << e.what();
  }
}

TEST(CollectiveLabel, NestsPerThread) {
  EXPECT_EQ(CollectiveLabel::current(), "");
  {
    CollectiveLabel outer("bucket 3");
    EXPECT_EQ(CollectiveLabel::current(), "bucket 3");
    {
      CollectiveLabel inner("metrics");
      EXPECT_EQ(CollectiveLabel::current(), "metrics");
    }
    EXPECT_EQ(CollectiveLabel::current(), "bucket 3");
  }
  EXPECT_EQ(CollectiveLabel::current(), "");
}

TEST(StallMessages, FormatBytes) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(4404019), "4.2 MiB");
  EXPECT_EQ(format_bytes(3ull << 30), "3.0 GiB");
}

}  // namespace
}  // namespace ft

namespace ft {
namespace {

// A CUDA-aware MPI sums device memory itself only with its own operator on a built-in type; fusetrain's
// fp16 and bf16 sums are host functions, so those all-reduces go through a host copy instead.
TEST(MpiSums, OnlyBuiltInSumsMayRunOnDeviceMemory) {
  EXPECT_FALSE(mpi_sums_natively(DType::kFloat16));
  EXPECT_FALSE(mpi_sums_natively(DType::kBFloat16));
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8})
    EXPECT_TRUE(mpi_sums_natively(dtype)) << static_cast<int>(dtype);
}

}  // namespace
}  // namespace ft
