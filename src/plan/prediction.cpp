// The step model of prediction.h: compute from the profile, each bucket's all-reduce from the link model, one
// communication stream in plan order (overlap.h), and the figures a user compares topologies by.
#include "plan/prediction.h"

#include <algorithm>
#include <cstdlib>

#include "plan/overlap.h"
#include "runtime/error.h"

namespace ft {

std::string PlanVariant::name() const {
  std::string text = algorithm == Algorithm::flat ? "flat" : "hierarchical";
  switch (wire) {
    case Wire::fp32: break;
    case Wire::fp16: text += "+fp16"; break;
    case Wire::bf16: text += "+bf16"; break;
    case Wire::powersgd: text += cat("+powersgd:", powersgd_rank); break;
  }
  return text;
}

PlanVariant parse_variant(const std::string& text) {
  const std::string accepted = "flat or hierarchical, optionally +fp16, +bf16 or +powersgd:R (e.g. flat+powersgd:4)";
  PlanVariant v;
  const auto plus = text.find('+');
  const std::string algorithm = text.substr(0, plus), wire = plus == std::string::npos ? "" : text.substr(plus + 1);
  if (algorithm == "hierarchical") v.algorithm = PlanVariant::Algorithm::hierarchical;
  else FT_REQUIRE(algorithm == "flat", "all-reduce '", text, "': ", accepted);
  if (wire.empty() || wire == "fp32") return v;
  if (wire == "fp16" || wire == "bf16") {
    v.wire = wire == "fp16" ? PlanVariant::Wire::fp16 : PlanVariant::Wire::bf16;
    return v;
  }
  FT_REQUIRE(wire.rfind("powersgd:", 0) == 0, "all-reduce '", text, "': ", accepted);
  char* end = nullptr;
  const long rank = std::strtol(wire.c_str() + 9, &end, 10);
  FT_REQUIRE(end != wire.c_str() + 9 && *end == '\0' && rank >= 1 && rank <= 1 << 20, "all-reduce '", text,
             "': PowerSGD's rank must be a whole number of at least 1");
  v.wire = PlanVariant::Wire::powersgd;
  v.powersgd_rank = static_cast<int>(rank);
  return v;
}

const StepProfile& baseline_profile(const PlanInputs& inputs) {
  for (const auto& p : inputs.profiles)
    if (p.ranks == 1) return p;
  throw Error("no profile measured on 1 rank alone: the baseline of scaling efficiency (run `fusetrain plan profile` "
              "without mpirun)");
}

const StepProfile& profile_for(const PlanInputs& inputs, const Topology& topology) {
  const int ranks = inputs.one_machine ? topology.ranks() : 1;
  for (const auto& p : inputs.profiles)
    if (p.ranks == ranks) return p;
  throw Error(cat("no profile measured with ", ranks, " ranks computing at once, which ", topology.name(),
                  " on one machine needs: `mpirun -np ", ranks, " fusetrain plan profile ...`"));
}

double allreduce_s(const Topology& topology, PlanVariant::Algorithm algorithm, double bytes, const LinkModel& link) {
  return algorithm == PlanVariant::Algorithm::flat ? flat_allreduce_s(topology, bytes, link)
                                                   : hierarchical_allreduce_s(topology, bytes, link);
}

std::vector<double> bucket_allreduce_bytes(const ProfileBucket& bucket, int element_bytes, const PlanVariant& variant) {
  if (variant.wire == PlanVariant::Wire::powersgd) {
    const PowerSgdElements e = powersgd_elements(bucket, variant.powersgd_rank);
    std::vector<double> sizes{double(e.first) * element_bytes};
    if (e.second > 0) sizes.push_back(double(e.second) * element_bytes);
    return sizes;
  }
  const int wire_bytes = variant.wire == PlanVariant::Wire::fp32 ? element_bytes : 2;
  return {double(bucket.elements) * wire_bytes};
}

double bucket_comm_s(const ProfileBucket& bucket, int element_bytes, const Topology& topology,
                     const PlanVariant& variant, const LinkModel& link) {
  double seconds = 0;
  for (const double bytes : bucket_allreduce_bytes(bucket, element_bytes, variant))
    seconds += allreduce_s(topology, variant.algorithm, bytes, link);
  return seconds;
}

namespace {

// `which` names the link ("the link", "the link beside compute") and `how` the sweep's extra option, if any.
void require_levels(const Topology& t, const PlanVariant& v, const LinkModel& link, const char* which,
                    const char* how) {
  FT_REQUIRE(t.nodes >= 1 && t.per_node >= 1, "topology ", t.name(), ": nodes and ranks per node must be at least 1");
  const bool between = t.nodes > 1;
  const bool inside = t.per_node > 1 && (t.nodes == 1 || v.algorithm == PlanVariant::Algorithm::hierarchical);
  FT_REQUIRE(!between || link.inter.known(), "topology ", t.name(), " needs ", which, " between nodes (level inter): ",
             "sweep it with `bench allreduce --sweep --level inter", how, "` on ranks of different nodes");
  FT_REQUIRE(!inside || link.intra.known(), "topology ", t.name(), " with ", v.name(), " needs ", which,
             " inside a node (level intra): sweep it with `bench allreduce --sweep --level intra", how,
             "` on ranks of one node");
}

bool beside_compute_given(const PlanInputs& inputs) {
  return inputs.one_machine && (inputs.beside_compute.inter.known() || inputs.beside_compute.intra.known());
}

// On one machine, the CPU the step's all-reduces take from its cores: every rank's bytes sent at each level times
// that level's CPU per byte, over the cores it was counted on. 0 when the level's CPU was not measured.
double machine_comm_cpu_s(const StepProfile& p, const Topology& topology, const PlanVariant& variant,
                          const LinkModel& link) {
  const LinkLevel& level = flat_level(topology, link);
  if (!level.cpu_known()) return 0;
  const bool hierarchical = variant.algorithm == PlanVariant::Algorithm::hierarchical;
  double cpu = 0;
  for (const auto& b : p.buckets)
    for (const double bytes : bucket_allreduce_bytes(b, p.element_bytes, variant))
      cpu += allreduce_machine_cpu_s(topology, hierarchical, bytes, link);
  return cpu / level.cpu_cores;
}

}  // namespace

PlanRow predict(const PlanInputs& inputs, const Topology& topology, const PlanVariant& variant) {
  require_levels(topology, variant, inputs.link, "the link", "");
  const bool beside = beside_compute_given(inputs);
  if (beside) require_levels(topology, variant, inputs.beside_compute, "the link beside compute", " --beside-compute 1");
  FT_REQUIRE(inputs.compute_scale > 0, "the compute scale must be above 0, not ", inputs.compute_scale);
  const double scale = inputs.compute_scale;
  const StepProfile& base = baseline_profile(inputs);
  const StepProfile& p = profile_for(inputs, topology);
  PlanRow row{topology, variant, p.ranks};
  row.compute_s = p.compute_s() * scale;
  if (topology.ranks() > 1) {
    std::vector<double> ready, duration, beside_s;
    for (const auto& b : p.buckets) {
      FT_REQUIRE(variant.wire != PlanVariant::Wire::powersgd || !b.shapes.empty(), variant.name(), " needs the ",
                 "buckets' tensor shapes, which the profile of ", p.source, " lacks");
      ready.push_back(b.ready_s * scale);
      duration.push_back(bucket_comm_s(b, p.element_bytes, topology, variant, inputs.link));
      if (beside) beside_s.push_back(bucket_comm_s(b, p.element_bytes, topology, variant, inputs.beside_compute));
    }
    const Overlap overlap = simulate_overlap(ready, duration, p.backward_s * scale, beside_s);
    row.comm_s = overlap.comm_s;
    row.exposed_s = overlap.exposed_s;
    if (inputs.one_machine) row.comm_cpu_s = machine_comm_cpu_s(p, topology, variant, inputs.link);
  }
  row.step_s = row.compute_s + std::max(row.exposed_s, row.comm_cpu_s);
  row.images_per_s = double(p.batch) * topology.ranks() / row.step_s;
  row.efficiency = base.compute_s() * scale / row.step_s * double(p.batch) / base.batch;
  return row;
}

}  // namespace ft
