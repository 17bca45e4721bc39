// The ring's event loop. Unit k is segment k % S of step k / S (reduce-scatter steps, then all-gather
// steps): its send and its receive are posted in unit order, so messages between two neighbours match in
// that order. A reduce-scatter receive lands in a scratch slot and is summed into place; an all-gather
// receive lands in place once the send that read that memory has completed.
#include "comm/mpi_ring.h"

#include <algorithm>

#include "comm/ring_plan.h"
#include "runtime/mpi_check.h"

namespace ft {
namespace {

int comm_size(MPI_Comm comm) {
  int size = 1;
  FT_CHECK_MPI(MPI_Comm_size(comm, &size));
  return size;
}

class Ring {
 public:
  Ring(MPI_Comm comm, const std::vector<SpanRegion>& regions, std::size_t element_size, const MpiSum& sum,
       const MpiRingOptions& options, MpiRingState& state);
  void run(const RingPoll& poll);

 private:
  static std::vector<std::size_t> counts(const std::vector<SpanRegion>& regions);
  bool reduce_scatter(std::size_t k) const { return k < half_; }
  int step(std::size_t k) const { return static_cast<int>((k % half_) / segments_); }
  std::size_t segment(std::size_t k) const { return k % segments_; }
  int send_chunk(std::size_t k) const;
  int recv_chunk(std::size_t k) const;
  std::vector<RegionPiece> pieces(int chunk, std::size_t j) const;
  char* address(const RegionPiece& p) const { return regions_[p.region].data + p.offset * element_size_; }
  char* slot(std::size_t k) const { return state_.scratch.data() + (k % options_.window) * slot_bytes_; }
  void post(bool send, std::size_t k, MPI_Request* request) const;
  void post_ready();
  bool test();
  void reduce(std::size_t k) const;

  MPI_Comm comm_;
  const std::vector<SpanRegion>& regions_;
  std::size_t element_size_;
  MpiSum sum_;
  MpiRingOptions options_;
  MpiRingState& state_;
  RingPlan plan_;
  int rank_ = 0, left_ = 0, right_ = 0;
  std::size_t segments_, half_, units_, slot_bytes_ = 0;
  // In-order progress: units whose send / receive was posted, whose send completed, whose received data
  // is final here (summed in the reduce-scatter).
  std::size_t sends_posted_ = 0, recvs_posted_ = 0, sent_ = 0, ready_ = 0;
  std::vector<char> done_;  // request 2k (send of unit k) or 2k + 1 (its receive) completed
  std::vector<int> indices_;
};

std::vector<std::size_t> Ring::counts(const std::vector<SpanRegion>& regions) {
  std::vector<std::size_t> out;
  for (const SpanRegion& region : regions) out.push_back(region.count);
  return out;
}

Ring::Ring(MPI_Comm comm, const std::vector<SpanRegion>& regions, std::size_t element_size, const MpiSum& sum,
           const MpiRingOptions& options, MpiRingState& state)
    : comm_(comm), regions_(regions), element_size_(element_size), sum_(sum), options_(options), state_(state),
      plan_(counts(regions), comm_size(comm), std::max<std::size_t>(1, options.segment_bytes / element_size)) {
  FT_CHECK(options.window >= 1, "mpi ring all-reduce: the window must hold at least one segment");
  FT_CHECK_MPI(MPI_Comm_rank(comm, &rank_));
  const int size = plan_.ranks();
  left_ = (rank_ + size - 1) % size;
  right_ = (rank_ + 1) % size;
  segments_ = plan_.segments();
  half_ = static_cast<std::size_t>(size - 1) * segments_;
  units_ = 2 * half_;
  slot_bytes_ = plan_.largest_segment() * element_size;
  if (state_.scratch.size() < options.window * slot_bytes_) state_.scratch.resize(options.window * slot_bytes_);
  state_.requests.assign(2 * units_, MPI_REQUEST_NULL);
  done_.assign(2 * units_, 0);
  indices_.resize(2 * units_);
}

// Reduce-scatter step t sends chunk rank - t and receives rank - t - 1; all-gather step t sends the
// complete chunk rank + 1 - t and receives rank - t.
int Ring::send_chunk(std::size_t k) const {
  return reduce_scatter(k) ? plan_.reduce_scatter_send(rank_, step(k)) : plan_.all_gather_send(rank_, step(k));
}

int Ring::recv_chunk(std::size_t k) const {
  return reduce_scatter(k) ? plan_.reduce_scatter_recv(rank_, step(k)) : plan_.all_gather_recv(rank_, step(k));
}

std::vector<RegionPiece> Ring::pieces(int chunk, std::size_t j) const {
  const auto [begin, end] = plan_.segment(chunk, j);
  return plan_.pieces(begin, end);
}

// One message per unit and direction: a reduce-scatter receive as contiguous bytes into its slot, other
// segments where they lie, as one hindexed datatype when they span several regions (an empty segment
// is a message of no bytes, so both sides still count it).
void Ring::post(bool send, std::size_t k, MPI_Request* request) const {
  const auto parts = pieces(send ? send_chunk(k) : recv_chunk(k), segment(k));
  std::size_t bytes = 0;
  for (const RegionPiece& p : parts) bytes += p.count * element_size_;
  void* buffer = slot(k);
  MPI_Datatype type = MPI_BYTE;
  int count = static_cast<int>(bytes);
  if ((send || !reduce_scatter(k)) && parts.size() == 1) {
    buffer = address(parts.front());
  } else if ((send || !reduce_scatter(k)) && parts.size() > 1) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> displacements(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      lengths.push_back(static_cast<int>(parts[i].count * element_size_));
      FT_CHECK_MPI(MPI_Get_address(address(parts[i]), &displacements[i]));
    }
    FT_CHECK_MPI(MPI_Type_create_hindexed(static_cast<int>(parts.size()), lengths.data(), displacements.data(),
                                          MPI_BYTE, &type));
    FT_CHECK_MPI(MPI_Type_commit(&type));
    buffer = MPI_BOTTOM;
    count = 1;
  }
  if (send) FT_CHECK_MPI(MPI_Isend(buffer, count, type, right_, options_.tag, comm_, request));
  else FT_CHECK_MPI(MPI_Irecv(buffer, count, type, left_, options_.tag, comm_, request));
  if (type != MPI_BYTE) FT_CHECK_MPI(MPI_Type_free(&type));  // MPI keeps it until the message completes
}

// A send carries data that is final here: its own chunk in the first step, else what unit k - S
// received. A reduce-scatter receive needs a free slot (unit k - window summed); an all-gather receive
// overwrites the memory the reduce-scatter's unit k - half sent from, so that send must be complete.
void Ring::post_ready() {
  const std::size_t window = options_.window;
  for (; sends_posted_ < units_ && sends_posted_ < sent_ + window &&
         (sends_posted_ < segments_ || sends_posted_ - segments_ < ready_);
       ++sends_posted_)
    post(true, sends_posted_, &state_.requests[2 * sends_posted_]);
  for (; recvs_posted_ < units_ && recvs_posted_ < ready_ + window &&
         (reduce_scatter(recvs_posted_) || recvs_posted_ - half_ < sent_);
       ++recvs_posted_)
    post(false, recvs_posted_, &state_.requests[2 * recvs_posted_ + 1]);
}

// Polls the requests posted and not yet retired in order; true when any completed.
bool Ring::test() {
  const std::size_t begin = 2 * std::min(sent_, ready_), end = 2 * std::max(sends_posted_, recvs_posted_);
  int count = 0;
  FT_CHECK_MPI(MPI_Testsome(static_cast<int>(end - begin), state_.requests.data() + begin, &count, indices_.data(),
                            MPI_STATUSES_IGNORE));
  if (count == MPI_UNDEFINED || count == 0) return false;
  for (int i = 0; i < count; ++i) done_[begin + static_cast<std::size_t>(indices_[i])] = 1;
  while (sent_ < sends_posted_ && done_[2 * sent_]) ++sent_;
  for (; ready_ < recvs_posted_ && done_[2 * ready_ + 1]; ++ready_)
    if (reduce_scatter(ready_)) reduce(ready_);
  return true;
}

void Ring::reduce(std::size_t k) const {
  const char* arrived = slot(k);
  for (const RegionPiece& p : pieces(recv_chunk(k), segment(k))) {
    FT_CHECK_MPI(MPI_Reduce_local(arrived, address(p), static_cast<int>(p.count), sum_.type, sum_.op));
    arrived += p.count * element_size_;
  }
}

void Ring::run(const RingPoll& poll) {
  while (ready_ < units_ || sent_ < units_) {
    post_ready();
    poll(test());
  }
  state_.requests.clear();
}

}  // namespace

void mpi_ring_allreduce(MPI_Comm comm, const std::vector<SpanRegion>& regions, std::size_t element_size,
                        const MpiSum& sum, const MpiRingOptions& options, MpiRingState& state, const RingPoll& poll) {
  if (comm_size(comm) == 1 || total_count(regions) == 0) return;
  Ring ring(comm, regions, element_size, sum, options, state);
  ring.run(poll);
}

}  // namespace ft
