// The time of one all-reduce on a described network: per level (inside a node, between nodes) a latency alpha
// and an inverse bandwidth beta, and the algorithms fusetrain runs (ring, recursive doubling, hierarchical).
#pragma once

#include <string>

namespace ft {

// One level of the network: alpha, seconds per message step of the ring (and of a node's reduce and broadcast);
// beta, seconds per byte through one rank's link; small_alpha, seconds per step of the small-message algorithm
// (recursive doubling: MPI_Iallreduce, whose messages above Open MPI's eager limit wait for a rendezvous the
// ring's eager segments do not), alpha when negative. cpu_s_per_byte: where a sweep's ranks shared one machine,
// the machine's busy CPU seconds per byte a rank sent (TCP's copies and the kernel's network path, the backend's
// reductions; 0: not measured), counted over cpu_cores cores.
struct LinkLevel {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double small_alpha_s = -1;
  double cpu_s_per_byte = 0;
  int cpu_cores = 0;
  bool known() const { return beta_s_per_byte > 0; }
  bool cpu_known() const { return cpu_s_per_byte > 0 && cpu_cores > 0; }
  double doubling_alpha_s() const { return small_alpha_s < 0 ? alpha_s : small_alpha_s; }
};

// The network a run's ranks talk over. ring_min_bytes: all-reduces of at least this many bytes run the ring,
// smaller ones recursive doubling (Open MPI's MPI_Iallreduce, as the mpi backend's `auto` chooses them); 0: the
// ring always (Gloo, NCCL, --mpi-algorithm ring); a negative value: recursive doubling always (native).
struct LinkModel {
  LinkLevel intra, inter;
  double ring_min_bytes = 0;
};

// A level from a data sheet: "GBIT" or "GBIT:US", the link's rate in Gbit/s and its latency per message step in
// microseconds (0 when left out): beta = 8 / (GBIT 1e9) s/byte, alpha = US 1e-6 s. Throws ft::Error naming `option`.
LinkLevel parse_link_level(const std::string& text, const std::string& option);

// N nodes of G ranks each; ranks are placed node by node.
struct Topology {
  int nodes = 1, per_node = 1;
  int ranks() const { return nodes * per_node; }
  std::string name() const;  // "4 x 8"
};

// Bandwidth-optimal ring over p ranks: a reduce-scatter then an all-gather, 2(p-1) steps each moving bytes/p
// over every link: 2(p-1) alpha + 2(p-1)/p bytes beta. Zero on one rank.
double ring_allreduce_s(int ranks, double bytes, const LinkLevel& link);
// Recursive doubling over p ranks: ceil(log2 p) steps, each exchanging the whole buffer:
// ceil(log2 p) (small alpha + bytes beta). Zero on one rank.
double doubling_allreduce_s(int ranks, double bytes, const LinkLevel& link);
// One all-reduce of `ranks` ranks on one level, by the algorithm `link` chooses for its size.
double level_allreduce_s(int ranks, double bytes, const LinkLevel& level, const LinkModel& link);
// The bytes one rank sends in that all-reduce (the ring: 2(p-1)/p bytes; recursive doubling: ceil(log2 p) bytes).
double level_sent_bytes(int ranks, double bytes, const LinkModel& link);
// A reduce to (or broadcast from) one rank of a node, pipelined in chunks down a binomial tree:
// ceil(log2 G) alpha + bytes beta. Zero for one rank.
double tree_stage_s(int ranks, double bytes, const LinkLevel& link);

// The level a flat all-reduce over every rank of `topology` runs at: between nodes when there are several.
const LinkLevel& flat_level(const Topology& topology, const LinkModel& link);
// Every rank in one ring (or doubling) across the topology: each step waits for its slowest hop, a link between
// nodes when there are several, so the whole runs at the inter-node level's alpha and beta.
double flat_allreduce_s(const Topology& topology, double bytes, const LinkModel& link);
// As the mpi backend's hierarchical all-reduce runs a bucket: a reduce to each node's first rank, an all-reduce
// among those leaders between nodes, a broadcast inside each node, one stage after the other.
double hierarchical_allreduce_s(const Topology& topology, double bytes, const LinkModel& link);

// The CPU seconds one all-reduce of `bytes` by every rank of `topology` takes from the one machine they share:
// each level's bytes sent by all its ranks times its cpu_s_per_byte (flat: P ranks at the flat level;
// hierarchical: each node's G - 1 ranks sending the buffer in the reduce and its tree forwarding G - 1 copies in the
// broadcast, inside the node, and the ring of the N leaders between nodes). A level without a measured CPU cost
// adds nothing.
double allreduce_machine_cpu_s(const Topology& topology, bool hierarchical, double bytes, const LinkModel& link);

}  // namespace ft
