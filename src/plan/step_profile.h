// What the cost model knows of one rank's step: the compute phases at a fixed local batch, and each fusion
// bucket's gradient elements, tensor shapes and the time it became ready after backward began.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

struct ProfileBucket {
  std::int64_t elements = 0;                     // gradient elements of the bucket
  double ready_s = 0;                            // seconds after backward began when its last gradient was in
  std::vector<std::vector<std::int64_t>> shapes; // its tensors' shapes, in plan order (PowerSGD's factors)
};

struct StepProfile {
  std::string model, device, source;  // source: how it was measured (profile run, results file)
  int batch = 0;            // images per rank per optimizer step
  int ranks = 1;            // ranks computing at once on the machine while it was measured
  int steps = 0;            // steps it was measured over
  int element_bytes = 4;    // bytes of one gradient element (fp32)
  double data_s = 0, forward_s = 0, backward_s = 0, optimizer_s = 0;  // per step, the slowest rank's
  std::vector<ProfileBucket> buckets;  // plan order: the order the communication stream reduces them in

  double compute_s() const { return data_s + forward_s + backward_s + optimizer_s; }
  std::int64_t elements() const;
};

// The elements PowerSGD at `rank` all-reduces for one bucket: `first` (the P factors and every tensor sent as
// it is) and `second` (the Q factors). A tensor of shape [n, ...] is a matrix [n, m = the rest]; with
// k = min(n, m, rank) it is compressed when (n + m) k 2 < n m (PyTorch's minimum compression rate 2) and sends
// n k then m k elements; vectors and matrices too small to gain go whole in `first`. No compressed tensor:
// the bucket is all-reduced whole, once (second = 0).
struct PowerSgdElements {
  std::int64_t first = 0, second = 0;
};
PowerSgdElements powersgd_elements(const ProfileBucket& bucket, int rank);

// Throws ft::Error naming `what` (the file) when a profile cannot be used: no batch, negative times, buckets
// ready outside backward, a bucket's shapes not adding up to its elements.
void check_profile(const StepProfile& profile, const std::string& what);

}  // namespace ft
