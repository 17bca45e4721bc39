// The all-reduce cost formulas of link_model.h (the alpha-beta model of Thakur, Rabenseifner and Gropp, 2005)
// for the algorithms fusetrain's backends run.
#include "plan/link_model.h"

#include <cmath>
#include <cstdlib>

#include "runtime/error.h"

namespace ft {
namespace {

int ceil_log2(int ranks) {
  int steps = 0;
  while ((1 << steps) < ranks) ++steps;
  return steps;
}

}  // namespace

LinkLevel parse_link_level(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double gbit = std::strtod(text.c_str(), &end);
  double us = 0;
  bool ok = end != text.c_str() && gbit > 0 && std::isfinite(gbit);
  if (ok && *end == ':') {
    const char* latency = end + 1;
    us = std::strtod(latency, &end);
    ok = end != latency && us >= 0 && std::isfinite(us);
  }
  FT_REQUIRE(ok && *end == '\0', option, ": '", text, "' is not GBIT or GBIT:US (a rate in Gbit/s above 0 and a ",
             "latency in microseconds, e.g. 25:5)");
  return {us * 1e-6, 8 / (gbit * 1e9)};
}

std::string Topology::name() const { return cat(nodes, " x ", per_node); }

double ring_allreduce_s(int ranks, double bytes, const LinkLevel& link) {
  if (ranks <= 1) return 0;
  const double steps = 2.0 * (ranks - 1);
  return steps * link.alpha_s + steps / ranks * bytes * link.beta_s_per_byte;
}

double doubling_allreduce_s(int ranks, double bytes, const LinkLevel& link) {
  if (ranks <= 1) return 0;
  return ceil_log2(ranks) * (link.doubling_alpha_s() + bytes * link.beta_s_per_byte);
}

double level_allreduce_s(int ranks, double bytes, const LinkLevel& level, const LinkModel& link) {
  const bool ring = link.ring_min_bytes >= 0 && bytes >= link.ring_min_bytes;
  return ring ? ring_allreduce_s(ranks, bytes, level) : doubling_allreduce_s(ranks, bytes, level);
}

double level_sent_bytes(int ranks, double bytes, const LinkModel& link) {
  return level_allreduce_s(ranks, bytes, LinkLevel{0, 1}, link);
}

double tree_stage_s(int ranks, double bytes, const LinkLevel& link) {
  if (ranks <= 1) return 0;
  return ceil_log2(ranks) * link.alpha_s + bytes * link.beta_s_per_byte;
}

const LinkLevel& flat_level(const Topology& topology, const LinkModel& link) {
  return topology.nodes > 1 ? link.inter : link.intra;
}

double flat_allreduce_s(const Topology& topology, double bytes, const LinkModel& link) {
  return level_allreduce_s(topology.ranks(), bytes, flat_level(topology, link), link);
}

double hierarchical_allreduce_s(const Topology& topology, double bytes, const LinkModel& link) {
  const double inside = 2 * tree_stage_s(topology.per_node, bytes, link.intra);
  return inside + level_allreduce_s(topology.nodes, bytes, link.inter, link);
}

double allreduce_machine_cpu_s(const Topology& topology, bool hierarchical, double bytes, const LinkModel& link) {
  const auto cost = [](const LinkLevel& level) { return level.cpu_known() ? level.cpu_s_per_byte : 0.0; };
  if (!hierarchical)
    return topology.ranks() * level_sent_bytes(topology.ranks(), bytes, link) * cost(flat_level(topology, link));
  const double inside = topology.nodes * 2.0 * (topology.per_node - 1) * bytes * cost(link.intra);
  return inside + topology.nodes * level_sent_bytes(topology.nodes, bytes, link) * cost(link.inter);
}

}  // namespace ft
