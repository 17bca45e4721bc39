// A ring all-reduce that runs on Gloo's point-to-point transport over memory scattered in several
// regions, so the gradient engine can reduce gradients where autograd left them instead of packing them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/span_staging.h"

namespace gloo {
class Context;
}

namespace ft {

// out[i] = a[i] + b[i] for n elements of one dtype (out may alias a).
using SumFunction = void (*)(void* out, const void* a, const void* b, std::size_t n);

// Sums the concatenation of `regions` in place over the context's ranks (see RingPlan), every rank
// passing regions of the same counts. Segments are at most `max_segment_bytes`; two are in flight per
// step. Messages use a slot derived from `tag`, which must be unused by any other pending operation.
// Gloo's IoException (a timeout after `timeout`, or a closed peer) propagates to the caller.
void gloo_ring_allreduce(gloo::Context& context, const std::vector<SpanRegion>& regions, std::size_t element_size,
                         SumFunction sum, std::uint32_t tag, std::chrono::milliseconds timeout,
                         std::size_t max_segment_bytes);

}  // namespace ft
