// The fusion plan: which gradient goes into which bucket at which offset. Built identically on every
// rank from the negotiated tensor list (reverse registration order, as gradients arrive in backward).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/backend.h"

namespace ft {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;
  std::int64_t numel() const;
  std::string describe() const;  // "fc.weight float32 [10, 128]"
};

struct BucketSpec {
  std::vector<std::size_t> tensors;     // indices into the tensor list, in fill order
  std::vector<std::int64_t> offsets;    // element offset of each tensor in the bucket
  std::int64_t numel = 0;               // gradient elements (the buffer adds one status element)
  DType dtype = DType::kFloat32;
};

// Buckets in launch order: the first holds the last-registered tensors and is at most first_bytes;
// the rest at most bucket_bytes; a tensor larger than a bucket gets a bucket of its own. A final bucket
// of several tensors above last_bytes is split so that its first-registered tensors, up to last_bytes,
// form a bucket of their own: what is left to send once backward ends stays small.
std::vector<BucketSpec> plan_buckets(const std::vector<TensorSpec>& tensors, std::size_t first_bytes,
                                     std::size_t bucket_bytes, std::size_t last_bytes);

// Compares every rank's tensor list (gathered as text) and throws an ft::Error naming the first
// differing tensor and the ranks on each side. `lists[r]` is describe_all() of rank r.
void check_same_tensors(const std::vector<std::string>& lists);
std::string describe_all(const std::vector<TensorSpec>& tensors);

}  // namespace ft
