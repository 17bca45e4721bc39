// The ring on Gloo unbound buffers: one buffer per region plus a two-segment scratch buffer for the
// reduce-scatter. Messages between two ranks on one slot match in posting order, so both sides post
// their pieces in the same (plan) order, each piece as one message.
#include "comm/gloo/gloo_ring.h"

#include <algorithm>
#include <memory>

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include "comm/ring_plan.h"
#include "runtime/error.h"

namespace ft {
namespace {

constexpr std::uint8_t kRingSlotPrefix = 0x46;  // distinct from the prefixes of Gloo's own collectives

using Buffer = std::unique_ptr<gloo::transport::UnboundBuffer>;

void wait_recv(Buffer& buffer, std::chrono::milliseconds timeout) {
  FT_CHECK(buffer->waitRecv(timeout), "gloo ring all-reduce: a receive was aborted");
}

void wait_send(Buffer& buffer, std::chrono::milliseconds timeout) {
  FT_CHECK(buffer->waitSend(timeout), "gloo ring all-reduce: a send was aborted");
}

}  // namespace

void gloo_ring_allreduce(gloo::Context& context, const std::vector<SpanRegion>& regions, std::size_t element_size,
                         SumFunction sum, std::uint32_t tag, std::chrono::milliseconds timeout,
                         std::size_t max_segment_bytes) {
  const int size = context.size, rank = context.rank;
  std::vector<std::size_t> counts;
  for (const SpanRegion& region : regions) counts.push_back(region.count);
  const RingPlan plan(counts, size, std::max<std::size_t>(1, max_segment_bytes / element_size));
  if (size == 1 || plan.total() == 0) return;

  std::vector<Buffer> buffers;
  for (const SpanRegion& region : regions)
    buffers.push_back(context.createUnboundBuffer(region.data, region.count * element_size));
  const std::size_t half = plan.largest_segment() * element_size;
  std::vector<char> scratch(2 * half);
  Buffer tmp = context.createUnboundBuffer(scratch.data(), scratch.size());

  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const auto slot = gloo::Slot::build(kRingSlotPrefix, tag);
  std::vector<std::size_t> sends(buffers.size(), 0), recvs(buffers.size(), 0);
  const auto pieces_of = [&](int chunk, std::size_t j) {
    const auto [begin, end] = plan.segment(chunk, j);
    return plan.pieces(begin, end);
  };
  const auto send_segment = [&](int chunk, std::size_t j) {
    for (const RegionPiece& p : pieces_of(chunk, j)) {
      buffers[p.region]->send(right, slot, p.offset * element_size, p.count * element_size);
      ++sends[p.region];
    }
  };
  const auto wait_all = [&] {
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      for (; recvs[i] > 0; --recvs[i]) wait_recv(buffers[i], timeout);
      for (; sends[i] > 0; --sends[i]) wait_send(buffers[i], timeout);
    }
  };

  // Reduce-scatter: segment j arrives in scratch half j % 2 and is added into place while j + 1 moves.
  const std::size_t segments = plan.segments();
  for (int step = 0; step + 1 < size; ++step) {
    const int out = plan.reduce_scatter_send(rank, step), in = plan.reduce_scatter_recv(rank, step);
    const auto post = [&](std::size_t j) {
      std::size_t at = (j % 2) * half;
      for (const RegionPiece& p : pieces_of(in, j)) {
        tmp->recv(left, slot, at, p.count * element_size);
        at += p.count * element_size;
      }
      send_segment(out, j);
    };
    for (std::size_t j = 0; j < std::min<std::size_t>(2, segments); ++j) post(j);
    for (std::size_t j = 0; j < segments; ++j) {
      const char* arrived = scratch.data() + (j % 2) * half;
      for (const RegionPiece& p : pieces_of(in, j)) {
        wait_recv(tmp, timeout);
        char* local = regions[p.region].data + p.offset * element_size;
        sum(local, local, arrived, p.count);
        arrived += p.count * element_size;
      }
      if (j + 2 < segments) post(j + 2);
    }
    wait_all();
  }
  // All-gather: complete chunks arrive straight into place.
  for (int step = 0; step + 1 < size; ++step) {
    const int out = plan.all_gather_send(rank, step), in = plan.all_gather_recv(rank, step);
    for (std::size_t j = 0; j < segments; ++j)
      for (const RegionPiece& p : pieces_of(in, j)) {
        buffers[p.region]->recv(left, slot, p.offset * element_size, p.count * element_size);
        ++recvs[p.region];
      }
    for (std::size_t j = 0; j < segments; ++j) send_segment(out, j);
    wait_all();
  }
}

}  // namespace ft
