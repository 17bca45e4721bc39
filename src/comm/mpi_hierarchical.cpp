// Node sub-communicators (shared-memory split, or consecutive groups for tests) and the three-stage
// all-reduce over them: MPI_Ireduce to the node leader, MPI_Iallreduce among leaders, MPI_Ibcast back,
// pipelined chunk by chunk.
#include "comm/mpi_hierarchical.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "comm/span_staging.h"
#include "runtime/error.h"

namespace ft {

NodeGrouping NodeGrouping::from_environment() {
  NodeGrouping grouping;
  const char* text = std::getenv("FUSETRAIN_TEST_RANKS_PER_NODE");
  if (!text || !*text) return grouping;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  FT_REQUIRE(*end == '\0' && errno == 0 && value > 0 && value <= 1 << 20,
             "FUSETRAIN_TEST_RANKS_PER_NODE must be a positive number of ranks, got '", text, "'");
  grouping.ranks_per_node = static_cast<int>(value);
  return grouping;
}

NodeComms::NodeComms(MPI_Comm comm, const NodeGrouping& grouping) {
  int rank = 0;
  FT_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  if (grouping.ranks_per_node > 0)
    FT_CHECK_MPI(MPI_Comm_split(comm, rank / grouping.ranks_per_node, rank, &local_));
  else
    FT_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local_));
  FT_CHECK_MPI(MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN));
  FT_CHECK_MPI(MPI_Comm_rank(local_, &local_rank_));
  FT_CHECK_MPI(MPI_Comm_size(local_, &local_size_));
  FT_CHECK_MPI(MPI_Comm_dup(local_, &local_broadcast_));
  FT_CHECK_MPI(MPI_Comm_split(comm, local_rank_ == 0 ? 0 : MPI_UNDEFINED, rank, &leaders_));
  if (leaders_ != MPI_COMM_NULL) {
    FT_CHECK_MPI(MPI_Comm_set_errhandler(leaders_, MPI_ERRORS_RETURN));
    FT_CHECK_MPI(MPI_Comm_size(leaders_, &node_count_));
  }
  FT_CHECK_MPI(MPI_Bcast(&node_count_, 1, MPI_INT, 0, local_));
}

NodeComms::~NodeComms() {
  try {
    if (leaders_ != MPI_COMM_NULL) FT_CHECK_MPI(MPI_Comm_free(&leaders_));
    if (local_broadcast_ != MPI_COMM_NULL) FT_CHECK_MPI(MPI_Comm_free(&local_broadcast_));
    if (local_ != MPI_COMM_NULL) FT_CHECK_MPI(MPI_Comm_free(&local_));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusetrain: warning: freeing the node communicators: %s\n", e.what());
  }
}

HierarchicalMpiBackend::HierarchicalMpiBackend(const World& world, const BackendOptions& options,
                                               std::unique_ptr<NodeComms> nodes, std::size_t chunk_bytes)
    : MpiBackend(world, options, chunk_bytes), nodes_(std::move(nodes)) {
  FT_CHECK(nodes_, "hierarchical mpi backend: no node communicators");
}

HierarchicalMpiBackend::~HierarchicalMpiBackend() = default;

// With the ring the leaders' step waits for the whole node reduction and the broadcast for the whole
// ring (a ring cannot take chunks one at a time); with MPI_Iallreduce all three stages pipeline by chunk.
void HierarchicalMpiBackend::reduce_regions(const std::vector<SpanRegion>& regions, DType dtype) {
  const MpiSum sum = sums_[dtype];
  const auto chunks = split_regions(regions, dtype_size(dtype));
  const bool leader = nodes_->local_rank() == 0, inside = nodes_->local_size() > 1;
  const bool across = leader && nodes_->node_count() > 1;
  const PostChunk reduce = [&](std::size_t i, MPI_Request* request) {
    char* data = chunks[i].first;
    FT_CHECK_MPI(MPI_Ireduce(leader ? MPI_IN_PLACE : data, data, chunks[i].second, sum.type, sum.op, 0,
                             nodes_->local(), request));
  };
  const PostChunk allreduce = [&](std::size_t i, MPI_Request* request) {
    FT_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, chunks[i].first, chunks[i].second, sum.type, sum.op,
                                nodes_->leaders(), request));
  };
  const PostChunk broadcast = [&](std::size_t i, MPI_Request* request) {
    FT_CHECK_MPI(MPI_Ibcast(chunks[i].first, chunks[i].second, sum.type, 0, nodes_->local_broadcast(), request));
  };
  PollBackoff wait = start_wait();
  if (use_ring(total_count(regions) * dtype_size(dtype))) {
    if (inside) run_chunks(wait, chunks.size(), reduce);
    if (across) ring_regions(wait, nodes_->leaders(), regions, dtype);
    if (inside) run_chunks(wait, chunks.size(), broadcast);
    return;
  }
  std::vector<PostChunk> stages;
  if (inside) stages.push_back(reduce);
  if (across) stages.push_back(allreduce);
  if (inside) stages.push_back(broadcast);
  run_pipeline(wait, chunks.size(), stages);
}

}  // namespace ft
