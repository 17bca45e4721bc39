// Peak memory of this process: the CUDA caching allocator's peak on GPU runs, the resident-set high-water
// mark (getrusage) on CPU runs, and on both the peak bytes of tensors LibTorch's allocator of the device held.
#pragma once

#include <ATen/Device.h>

#include <cstdint>
#include <string>

namespace ft {

// GPU: the CUDA caching allocator's peak allocated bytes. CPU: the process's peak resident set, which also
// holds LibTorch's code and libraries, MPI and the C++ heap (several hundred MiB before any tensor exists).
std::int64_t peak_memory_bytes(const at::Device& device);
// Peak bytes of live tensors in LibTorch's allocator of `device` since the last reset_peak_memory (what was
// held at the reset counts): on a GPU the same figure as peak_memory_bytes; on the CPU counted by a wrapper
// that this file installs around LibTorch's CPU allocator when the program starts.
std::int64_t peak_allocated_bytes(const at::Device& device);
// Both peaks restart from the bytes held now (the resident-set high-water mark cannot be reset).
void reset_peak_memory(const at::Device& device);
// "NVIDIA H100 80GB HBM3" or the CPU model name.
std::string device_name(const at::Device& device);

}  // namespace ft
