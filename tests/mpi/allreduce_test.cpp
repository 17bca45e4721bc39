// All-reduce on real ranks for every host backend, dtype and size (0, 1, odd, a million), with values whose
// every partial sum is exact, so results must match the reference bit for bit in any reduction order.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "comm/half.h"
#include "comm/mpi_backend.h"
#include "element_store.h"
#include "mpi_env.h"

namespace ft {
namespace {

using test::store;

// Rank r's element i. Magnitudes keep every sum over up to 4 ranks exact: 16-bit floats are quarter
// steps below 16, float32 stays below 2^24, int64 needs more than 32 bits, uint8 sums stay below 256.
double element(DType dtype, int rank, std::size_t i) {
  const double r = rank + 1;
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return (static_cast<double>(i % 13) - 6) * 0.25 * r;
    case DType::kFloat32: return static_cast<double>(i % 4099) * 0.5 * r - rank;
    case DType::kFloat64: return static_cast<double>(i) * 0x1p-20 * r + rank;
    case DType::kInt32: return static_cast<double>(i % 100003) * r - 7 * rank;
    case DType::kInt64:
      return static_cast<double>((static_cast<std::int64_t>(rank + 1) << 33) + static_cast<std::int64_t>(i));
    case DType::kUInt8: return static_cast<double>((i + rank) % 50);
  }
  return 0;
}

double load(DType dtype, const void* base, std::size_t i) {
  switch (dtype) {
    case DType::kFloat16: return half_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::kBFloat16: return bf16_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::kFloat32: return static_cast<const float*>(base)[i];
    case DType::kFloat64: return static_cast<const double*>(base)[i];
    case DType::kInt32: return static_cast<const std::int32_t*>(base)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case DType::kUInt8: return static_cast<const std::uint8_t*>(base)[i];
  }
  return 0;
}

// Fills `count` elements plus a guard element, all-reduces, and returns how many elements differ from
// the exact sum (the guard must be untouched). Prints the first few differences.
std::size_t allreduce_errors(Backend& backend, DType dtype, std::size_t count) {
  const int size = backend.size();
  const std::size_t element_size = dtype_size(dtype);
  std::vector<unsigned char> buffer((count + 1) * element_size);
  for (std::size_t i = 0; i < count; ++i) store(dtype, buffer.data(), i, element(dtype, backend.rank(), i));
  std::memset(buffer.data() + count * element_size, 0x5a, element_size);

  backend.allreduce(buffer.data(), count, dtype);

  std::size_t errors = 0;
  for (std::size_t i = 0; i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < size; ++r) expected += element(dtype, r, i);
    const double got = load(dtype, buffer.data(), i);
    if (got != expected && ++errors <= 3)
      ADD_FAILURE() << dtype_name(dtype) << "[" << i << "] = " << got << ", expected " << expected;
  }
  for (std::size_t b = 0; b < element_size; ++b)
    if (buffer[count * element_size + b] != 0x5a) ++errors;
  return errors;
}

using AllReduceCase = std::tuple<std::string, DType, std::size_t>;

class AllReduce : public ::testing::TestWithParam<AllReduceCase> {};

TEST_P(AllReduce, SumIsExact) {
  const auto& [name, dtype, count] = GetParam();
  EXPECT_EQ(allreduce_errors(test::shared_backend(name), dtype, count), 0u);
}

std::string case_name(const ::testing::TestParamInfo<AllReduceCase>& info) {
  const auto& [name, dtype, count] = info.param;
  return name + "_" + dtype_name(dtype) + "_" + std::to_string(count);
}

INSTANTIATE_TEST_SUITE_P(HostBackends, AllReduce,
                         ::testing::Combine(::testing::ValuesIn(test::host_backends()),
                                            ::testing::Values(DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                              DType::kBFloat16, DType::kInt32, DType::kInt64,
                                                              DType::kUInt8),
                                            ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{7},
                                                              std::size_t{1023}, std::size_t{1000003})),
                         case_name);

// Spans of the given counts, each its own allocation with a guard element, or (`adjacent`) back to back in one
// allocation with one guard after them all, as a flat buffer holds its tensors; element i of the concatenation
// carries the same value as element i of one buffer. Returns the number of errors.
std::size_t allreduce_spans_errors(Backend& backend, DType dtype, const std::vector<std::size_t>& counts,
                                   bool adjacent = false) {
  const std::size_t element_size = dtype_size(dtype);
  std::size_t total = 0;
  for (std::size_t count : counts) total += count;
  std::vector<std::vector<unsigned char>> buffers;
  if (adjacent) buffers.emplace_back((total + 1) * element_size);
  std::vector<unsigned char*> starts;
  std::vector<HostSpan> spans;
  std::size_t global = 0;
  for (std::size_t count : counts) {
    if (!adjacent) buffers.emplace_back((count + 1) * element_size);
    unsigned char* start = adjacent ? buffers[0].data() + global * element_size : buffers.back().data();
    for (std::size_t i = 0; i < count; ++i) store(dtype, start, i, element(dtype, backend.rank(), global + i));
    if (!adjacent) std::memset(start + count * element_size, 0x5a, element_size);
    starts.push_back(start);
    spans.push_back({start, count});
    global += count;
  }
  if (adjacent) std::memset(buffers[0].data() + total * element_size, 0x5a, element_size);
  backend.allreduce_spans(spans, dtype);
  std::size_t errors = 0;
  global = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    for (std::size_t i = 0; i < counts[s]; ++i) {
      double expected = 0;
      for (int r = 0; r < backend.size(); ++r) expected += element(dtype, r, global + i);
      const double got = load(dtype, starts[s], i);
      if (got != expected && ++errors <= 3)
        ADD_FAILURE() << dtype_name(dtype) << " span " << s << "[" << i << "] = " << got << ", expected " << expected;
    }
    global += counts[s];
    if (adjacent && s + 1 < counts.size()) continue;
    for (std::size_t b = 0; b < element_size; ++b)
      if (starts[s][counts[s] * element_size + b] != 0x5a) ++errors;
  }
  return errors;
}

std::vector<std::vector<std::size_t>> span_layouts() {
  std::vector<std::size_t> many_small;
  for (std::size_t i = 0; i < 300; ++i) many_small.push_back(i % 17);
  // Small spans (staged) between large ones (in place), empty ones, and a span larger than a segment.
  return {{}, {0}, {5}, {1000003}, {3, 0, 70000, 1, 20000, 300000, 2}, many_small, {16385, 16383, 16384}};
}

// Uses Backend's default allreduce_spans (pack, reduce, unpack) over another backend's allreduce.
class PackingBackend final : public Backend {
 public:
  explicit PackingBackend(Backend& inner) : Backend(test::world(), "packing", 20), inner_(inner) {}
  bool uses_device_memory() const override { return false; }

 private:
  void transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) override {
    inner_.allreduce(data, count, dtype, stream);
  }
  void transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) override {
    inner_.broadcast(data, bytes, root, stream);
  }
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) override {
    inner_.allgather(in, out, bytes, stream);
  }
  void transfer_barrier() override { inner_.barrier(); }

  Backend& inner_;
};

class AllReduceSpans : public ::testing::TestWithParam<std::string> {};

TEST_P(AllReduceSpans, ConcatenationSumIsExactInPlace) {
  Backend& backend = test::shared_backend(GetParam());
  EXPECT_TRUE(backend.reduces_spans_in_place());
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt64, DType::kUInt8})
    for (const auto& layout : span_layouts())
      EXPECT_EQ(allreduce_spans_errors(backend, dtype, layout), 0u) << dtype_name(dtype) << ", " << layout.size()
                                                                    << " spans";
}

// Spans back to back in one buffer: a small one staged beside large ones reduced in place must not carry stale
// bytes of its neighbours back over them (nor write past its own end).
TEST_P(AllReduceSpans, AdjacentSpansOfOneBuffer) {
  Backend& backend = test::shared_backend(GetParam());
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kUInt8})
    for (const auto& layout : span_layouts())
      EXPECT_EQ(allreduce_spans_errors(backend, dtype, layout, true), 0u) << dtype_name(dtype) << ", "
                                                                          << layout.size() << " spans, adjacent";
}

TEST_P(AllReduceSpans, DefaultPackingMatches) {
  PackingBackend backend(test::shared_backend(GetParam()));
  EXPECT_FALSE(backend.reduces_spans_in_place());
  for (const auto& layout : span_layouts())
    EXPECT_EQ(allreduce_spans_errors(backend, DType::kFloat32, layout), 0u) << layout.size() << " spans";
}

INSTANTIATE_TEST_SUITE_P(HostBackends, AllReduceSpans, ::testing::ValuesIn(test::host_backends()));

// Buffers are pipelined in chunks (more of them than the in-flight window here); a small chunk size
// exercises the boundaries and the odd remainders.
TEST(MpiChunks, AllReduceAcrossChunkBoundaries) {
  BackendOptions options;
  options.stall_timeout_s = 20;
  MpiBackend backend(test::world(), options, 400000);
  EXPECT_EQ(allreduce_errors(backend, DType::kFloat32, 1000003), 0u);
  EXPECT_EQ(allreduce_errors(backend, DType::kBFloat16, 1000003), 0u);
  EXPECT_EQ(allreduce_errors(backend, DType::kInt64, 100000), 0u);
}

}  // namespace
}  // namespace ft
