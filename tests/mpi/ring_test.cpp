// The MPI backend's ring all-reduce against its MPI_Iallreduce path on real ranks (1 to 4): the same bits
// where every partial sum is exact or with 2 ranks, within the rounding of a reordered sum otherwise, for
// fp32/fp16/bf16, sizes below the rank count, odd sizes, several segments and several regions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "comm/half.h"
#include "comm/mpi_backend.h"
#include "mpi_env.h"

namespace ft {
namespace {

constexpr std::size_t kSegmentBytes = 4096;  // many segments per chunk, so the pipeline wraps its slots

std::unique_ptr<MpiBackend> backend(MpiAlgorithm algorithm) {
  BackendOptions options;
  options.stall_timeout_s = 20;
  options.mpi_algorithm = algorithm;
  return std::make_unique<MpiBackend>(test::world(), options, kSegmentBytes);
}

float to_float(DType dtype, std::uint16_t bits) {
  return dtype == DType::kFloat16 ? half_to_float(bits) : bf16_to_float(bits);
}

// Rank r's `count` values of `dtype` as bytes: small integers and halves (every sum exact) or random
// floats in [-1, 1] from a seed of the rank and size.
std::vector<unsigned char> values(DType dtype, int rank, std::size_t count, bool exact) {
  std::mt19937 random(static_cast<unsigned>(rank * 7919 + count));
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<unsigned char> out(count * dtype_size(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    const float v = exact ? static_cast<float>((i * 5 + static_cast<std::size_t>(rank) * 3) % 17) * 0.5f - 4
                          : uniform(random);
    if (dtype == DType::kFloat32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      const std::uint16_t bits = dtype == DType::kFloat16 ? float_to_half(v) : float_to_bf16(v);
      std::memcpy(out.data() + 2 * i, &bits, 2);
    }
  }
  return out;
}

double at(DType dtype, const std::vector<unsigned char>& bytes, std::size_t i) {
  if (dtype == DType::kFloat32) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * i, 2);
  return to_float(dtype, bits);
}

// Each of the ring's and the native sums rounds at most once per addition, by at most half an ulp of a
// partial sum no larger than the sum of magnitudes; so the two differ by at most (size - 1) ulps of it.
double tolerance(DType dtype, int size, double magnitude) {
  const double epsilon = dtype == DType::kFloat32 ? 0x1p-24 : dtype == DType::kFloat16 ? 0x1p-11 : 0x1p-8;
  return 2.0 * (size - 1) * epsilon * magnitude + 1e-30;
}

// Splits `count` elements into spans of the given proportions (large ones stay in place, small ones are
// staged) and all-reduces them with `b`; returns the concatenation.
std::vector<unsigned char> reduce(Backend& b, DType dtype, std::vector<unsigned char> data,
                                  const std::vector<std::size_t>& cuts) {
  std::vector<std::vector<unsigned char>> parts;
  std::vector<HostSpan> spans;
  const std::size_t element = dtype_size(dtype), count = data.size() / element;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= cuts.size(); ++k) {
    const std::size_t end = k < cuts.size() ? std::min(count, cuts[k]) : count;
    parts.emplace_back(data.begin() + static_cast<long>(begin * element), data.begin() + static_cast<long>(end * element));
    begin = end;
  }
  for (auto& part : parts) spans.push_back({part.data(), part.size() / element});
  b.allreduce_spans(spans, dtype);
  data.clear();
  for (const auto& part : parts) data.insert(data.end(), part.begin(), part.end());
  return data;
}

struct Layout {
  std::size_t count;
  std::vector<std::size_t> cuts;  // span boundaries (element indices)
};

std::vector<Layout> layouts() {
  return {{1, {}}, {2, {}}, {3, {}}, {5, {1, 1, 3}}, {1001, {}}, {40003, {}},
          {100003, {7, 40000, 40001, 70000}}, {65536 + 17, {20, 32768 + 5}}};
}

void compare(DType dtype, bool exact) {
  const World& world = test::world();
  auto ring = backend(MpiAlgorithm::ring), native = backend(MpiAlgorithm::native);
  for (const Layout& layout : layouts()) {
    SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " x " << layout.count << " in "
                                      << layout.cuts.size() + 1 << " spans, " << (exact ? "exact" : "random"));
    const auto mine = values(dtype, world.rank(), layout.count, exact);
    const auto by_ring = reduce(*ring, dtype, mine, layout.cuts);
    const auto by_native = reduce(*native, dtype, mine, layout.cuts);
    if (exact || world.size() <= 2) {
      EXPECT_TRUE(by_ring == by_native);
      continue;
    }
    std::vector<std::vector<unsigned char>> everyone;
    for (int r = 0; r < world.size(); ++r) everyone.push_back(values(dtype, r, layout.count, false));
    std::size_t errors = 0;
    for (std::size_t i = 0; i < layout.count; ++i) {
      double magnitude = 0;
      for (const auto& theirs : everyone) magnitude += std::fabs(at(dtype, theirs, i));
      const double a = at(dtype, by_ring, i), b = at(dtype, by_native, i);
      if (!(std::fabs(a - b) <= tolerance(dtype, world.size(), magnitude)) && ++errors <= 3)  // NaN counts
        ADD_FAILURE() << "[" << i << "] ring " << a << ", native " << b;
    }
    EXPECT_EQ(errors, 0u);
  }
}

TEST(MpiRing, ExactValuesGiveTheNativeBits) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) compare(dtype, true);
}

TEST(MpiRing, RandomValuesAgreeWithinRounding) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) compare(dtype, false);
}

// A single buffer and every dtype the backend reduces; the ring leaves memory beside the buffer alone. Only
// the low byte of each 16-bit word is set: tiny integers and subnormals, whose sums are exact.
TEST(MpiRing, SingleBufferMatchesNativeForEveryDtype) {
  const World& world = test::world();
  auto ring = backend(MpiAlgorithm::ring), native = backend(MpiAlgorithm::native);
  for (const DTypeTraits& traits : kDTypeTable)
    for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{9999}}) {
      const std::size_t bytes = count * traits.size;
      std::vector<unsigned char> a(bytes + 8), b(bytes + 8);
      for (std::size_t i = 0; i < bytes; i += 2) a[i] = static_cast<unsigned char>((i * 3 + world.rank()) % 7);
      std::memset(a.data() + bytes, 0x5a, 8);
      b = a;
      ring->allreduce(a.data(), count, traits.dtype);
      native->allreduce(b.data(), count, traits.dtype);
      EXPECT_TRUE(a == b) << traits.name << " x " << count;
    }
}

TEST(MpiRing, AutoTakesTheRingFromTheThreshold) {
  auto automatic = backend(MpiAlgorithm::automatic);
  EXPECT_FALSE(automatic->use_ring(MpiBackend::kRingMinBytes - 1));
  EXPECT_TRUE(automatic->use_ring(MpiBackend::kRingMinBytes));
  EXPECT_TRUE(backend(MpiAlgorithm::ring)->use_ring(4));
  EXPECT_FALSE(backend(MpiAlgorithm::native)->use_ring(std::size_t{1} << 30));
}

}  // namespace
}  // namespace ft
