// Peak memory of this process: the CUDA caching allocator's peak on GPU runs, the resident-set
// high-water mark (getrusage) on CPU runs.
#pragma once

#include <ATen/Device.h>

#include <cstdint>
#include <string>

namespace ft {

std::int64_t peak_memory_bytes(const at::Device& device);
void reset_peak_memory(const at::Device& device);
// "NVIDIA H100 80GB HBM3" or the CPU model name.
std::string device_name(const at::Device& device);

}  // namespace ft
