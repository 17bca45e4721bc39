// Tests of the tensor-to-kernel glue: each map type the kernels take, the refusal of any other naming the op, the
// computed type and layout, the map a kernel takes of a tensor, and a tensor's data pointer (null if undefined).
#include <gtest/gtest.h>

#include <string>

#include "models/kernel_tensors.h"
#include "runtime/error.h"

namespace ft {
namespace {

TEST(KernelTensors, MapTypeOfEachTypeTheKernelsTake) {
  EXPECT_EQ(kernel_map_type(at::zeros({2}, at::kFloat), "op"), MapType::f32);
  EXPECT_EQ(kernel_map_type(at::zeros({2}, at::kHalf), "op"), MapType::f16);
  EXPECT_EQ(kernel_map_type(at::zeros({2}, at::kBFloat16), "op"), MapType::bf16);
  for (at::ScalarType other : {at::kDouble, at::kInt, at::kByte}) {
    try {
      kernel_map_type(at::zeros({2}, other), "max-pool 2x2");
      ADD_FAILURE() << "took " << other;
    } catch (const Error& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find("max-pool 2x2: the CUDA kernels take float32, float16 or bfloat16, not "), std::string::npos)
          << text;
    }
  }
}

// The computed type: a CUDA tensor's own; on the CPU float64 stays and every other type becomes float32.
TEST(KernelTensors, ComputeTypeAndLayout) {
  EXPECT_EQ(kernel_compute_type(at::zeros({2}, at::kDouble)), at::kDouble);
  for (at::ScalarType type : {at::kFloat, at::kHalf, at::kBFloat16})
    EXPECT_EQ(kernel_compute_type(at::zeros({2}, type)), at::kFloat) << type;
  if (at::hasCUDA())
    EXPECT_EQ(kernel_compute_type(at::zeros({2}, at::TensorOptions(at::kCUDA).dtype(at::kHalf))), at::kHalf);
  EXPECT_EQ(map_memory_format(true), at::MemoryFormat::ChannelsLast);
  EXPECT_EQ(map_memory_format(false), at::MemoryFormat::Contiguous);
}

// The map a kernel takes: the computed type, the asked layout, the same values (half types widened exactly).
TEST(KernelTensors, KernelMapTypeLayoutAndValues) {
  const at::Tensor nchw = at::arange(2 * 3 * 4 * 5, at::kFloat).reshape({2, 3, 4, 5}).div(8);
  for (at::ScalarType type : {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16})
    for (bool channels_last : {false, true}) {
      const at::Tensor x = nchw.to(type);
      const at::Tensor m = kernel_map(x, channels_last);
      EXPECT_EQ(m.scalar_type(), type == at::kDouble ? at::kDouble : at::kFloat) << type;
      EXPECT_EQ(m.is_contiguous(at::MemoryFormat::ChannelsLast), channels_last) << type;
      EXPECT_EQ(m.is_contiguous(), !channels_last) << type;
      EXPECT_TRUE(at::equal(m.to(at::kDouble), x.to(at::kDouble))) << type << " channels_last " << channels_last;
    }
}

TEST(KernelTensors, DataOrNull) {
  EXPECT_EQ(data_or_null<float>(at::Tensor()), nullptr);
  const at::Tensor t = at::zeros({3});
  EXPECT_EQ(data_or_null<const float>(t), t.data_ptr<float>());
}

}  // namespace
}  // namespace ft
