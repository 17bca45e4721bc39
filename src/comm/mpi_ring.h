// A bandwidth-optimal ring all-reduce on MPI point-to-point messages over memory in several regions: each
// rank sends to its right neighbour and receives from its left one at the same time, in pipelined segments.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "comm/mpi_sum_types.h"
#include "comm/span_staging.h"

namespace ft {

// What the ring keeps between calls and after a failure: the requests in flight and the slots incoming
// reduce-scatter segments land in. The owner keeps both alive until every abandoned request is done.
struct MpiRingState {
  std::vector<MPI_Request> requests;
  std::vector<char> scratch;
};

struct MpiRingOptions {
  std::size_t segment_bytes;  // the largest message (RingPlan's segments)
  std::size_t window;         // segments in flight in each direction
  int tag;                    // the messages' tag on the communicator
};

// Called after every poll of the requests with whether one completed; it yields, sleeps, or throws when
// the deadline has passed (the caller's StallError), which abandons the ring with its requests in `state`.
using RingPoll = std::function<void(bool progressed)>;

// Sums the concatenation of `regions` in place over the ranks of `comm`, every rank passing regions of
// the same counts: reduce-scatter then all-gather (see RingPlan). A segment is sent as soon as the data
// it carries is final here, so steps overlap. Sums are MPI_Reduce_local with `sum`, the arithmetic of the
// MPI_Iallreduce path, but each element is summed in ring order: the results match that path bit for bit
// on 2 ranks or where every partial sum is exact, and may differ in the last bits otherwise.
void mpi_ring_allreduce(MPI_Comm comm, const std::vector<SpanRegion>& regions, std::size_t element_size,
                        const MpiSum& sum, const MpiRingOptions& options, MpiRingState& state, const RingPoll& poll);

}  // namespace ft
