// What the CUDA runtime says about this build and host, for code that must not include CUDA headers:
// the one place outside kernels where CUDA builds and builds without CUDA differ.
#pragma once

#include <string>

namespace ft {

// Whether this build has the CUDA kernels, and whether it also sees at least one GPU.
bool cuda_kernels_built();
bool cuda_kernels_available();

// "0000:3b:00.0" and "NVIDIA H100 80GB HBM3" for CUDA device `index`; empty when unknown or built
// without CUDA.
std::string cuda_pci_bus_id(int index);
std::string cuda_device_name(int index);

}  // namespace ft
