// The error every CUDA entry point raises in builds without CUDA, worded once so that a user always
// learns which setting avoids it.
#include "kernels/common.h"

#include "runtime/error.h"

namespace ft {

void cuda_not_built(const char* what) {
  throw Error(cat(what, ": this fusetrain was built without CUDA; set train.device: cpu (or --device cpu), or "
                        "rebuild on a host with nvcc (cmake -DFUSETRAIN_CUDA=ON)"));
}

}  // namespace ft
