// The hierarchical MPI all-reduce for worlds of several nodes: reduce inside each node, all-reduce among
// one leader per node, broadcast inside each node, over sub-communicators of the MPI backend's own.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/mpi_backend.h"

namespace ft {

// Which ranks share a node. Test aid: FUSETRAIN_TEST_RANKS_PER_NODE=k makes ranks [0, k) one node,
// [k, 2k) the next and so on, so that a multi-node world can be exercised on one host.
struct NodeGrouping {
  int ranks_per_node = 0;  // 0: the ranks that share memory (MPI_COMM_TYPE_SHARED) form a node
  // The grouping FUSETRAIN_TEST_RANKS_PER_NODE asks for (0 when unset); throws ft::Error naming the
  // variable when it is not a positive integer.
  static NodeGrouping from_environment();
};

// The nodes of a communicator: its node-local communicator and, on node leaders (local rank 0), the
// communicator of all leaders (MPI_COMM_NULL elsewhere). Creation is collective over `comm`.
class NodeComms {
 public:
  NodeComms(MPI_Comm comm, const NodeGrouping& grouping);
  ~NodeComms();
  NodeComms(const NodeComms&) = delete;
  NodeComms& operator=(const NodeComms&) = delete;

  MPI_Comm local() const { return local_; }
  // A duplicate of local(): the broadcast stage posts there, so that its chunks never match the
  // reduce stage's on the same communicator whatever order the two stages post in.
  MPI_Comm local_broadcast() const { return local_broadcast_; }
  MPI_Comm leaders() const { return leaders_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int node_count() const { return node_count_; }

 private:
  MPI_Comm local_ = MPI_COMM_NULL, local_broadcast_ = MPI_COMM_NULL, leaders_ = MPI_COMM_NULL;
  int local_rank_ = 0, local_size_ = 1, node_count_ = 1;
};

// The hierarchy pays where inter-node links are the bottleneck: only leaders send across nodes, each
// carrying 2(N-1)/N of the buffer for N nodes instead of every rank's ring share. The three stages are
// pipelined chunk by chunk (a chunk is broadcast while later ones are still reduced) under one deadline;
// where the backend picks the ring for a bucket (MpiBackend::use_ring), the leaders run that ring.
// Broadcast, all-gather and barrier stay flat.
class HierarchicalMpiBackend final : public MpiBackend {
 public:
  // Collective over world.
  HierarchicalMpiBackend(const World& world, const BackendOptions& options, std::unique_ptr<NodeComms> nodes,
                         std::size_t chunk_bytes = kChunkBytes);
  ~HierarchicalMpiBackend() override;

  AllreduceAlgorithm allreduce_algorithm() const override { return AllreduceAlgorithm::hierarchical; }
  const NodeComms& nodes() const { return *nodes_; }

 protected:
  void reduce_regions(const std::vector<SpanRegion>& regions, DType dtype) override;

 private:
  std::unique_ptr<NodeComms> nodes_;
};

}  // namespace ft
