// The prediction of a data-parallel step on a topology for one all-reduce: compute as profiled (it does not change
// with the number of ranks at a fixed local batch), each bucket's all-reduce on the link model, their overlap
// with backward, and the step time, images/s and scaling efficiency that follow.
#pragma once

#include <string>
#include <vector>

#include "plan/link_model.h"
#include "plan/step_profile.h"

namespace ft {

// One all-reduce fusetrain offers: flat (ring or recursive doubling across all ranks) or hierarchical, with the
// gradients on the wire as they are (fp32), halved (fp16, bf16) or as PowerSGD's factors at a rank.
struct PlanVariant {
  enum class Algorithm { flat, hierarchical } algorithm = Algorithm::flat;
  enum class Wire { fp32, fp16, bf16, powersgd } wire = Wire::fp32;
  int powersgd_rank = 0;
  std::string name() const;  // "flat", "hierarchical+bf16", "flat+powersgd:4"
};
// "flat", "hierarchical", each optionally followed by "+fp16", "+bf16" or "+powersgd:R" (R >= 1). Throws
// ft::Error naming the text and what is accepted.
PlanVariant parse_variant(const std::string& text);

struct PlanRow {
  Topology topology;
  PlanVariant variant;
  int profile_ranks = 1;  // the co-located ranks of the profile whose compute the row uses
  // comm_cpu_s: on one machine, the all-reduces' CPU spread over its cores (0 elsewhere or unmeasured).
  double compute_s = 0, comm_s = 0, exposed_s = 0, comm_cpu_s = 0, step_s = 0, images_per_s = 0, efficiency = 0;
};

// What a prediction starts from: profiles by the ranks computing at once when measured (one of 1 rank at least,
// the baseline of efficiency), the link model, and where the topology's ranks compute: on one machine (the
// namespace cluster: a topology of P ranks takes the compute of the profile measured with P ranks at once) or
// each on a device of its own (the 1-rank profile for every topology).
struct PlanInputs {
  std::vector<StepProfile> profiles;
  LinkModel link;
  bool one_machine = false;
  // On one machine, the link as swept beside a busy thread per rank (`bench allreduce --sweep --beside-compute`):
  // the pace of an all-reduce while backward fills the cores. No level known: every all-reduce at the link's pace.
  LinkModel beside_compute;
  // The target's compute time over the profiled device's (0.5: the cluster's device computes this step twice as
  // fast): every phase and ready time of every profile is scaled by it.
  double compute_scale = 1;
};

// The 1-rank profile (the baseline) and the profile a topology computes with; throw ft::Error naming what to
// measure when it is missing.
const StepProfile& baseline_profile(const PlanInputs& inputs);
const StepProfile& profile_for(const PlanInputs& inputs, const Topology& topology);

// One all-reduce of `elements` gradient elements of `element_bytes` each (the wire's size applied by the caller).
double allreduce_s(const Topology& topology, PlanVariant::Algorithm algorithm, double bytes, const LinkModel& link);
// The sizes in bytes of the all-reduces one bucket takes under `variant`: the bucket in the wire's element size,
// or PowerSGD's two (one when no tensor of it is compressed).
std::vector<double> bucket_allreduce_bytes(const ProfileBucket& bucket, int element_bytes, const PlanVariant& variant);
// The communication stream's time for one bucket under `variant`: its all-reduces one after the other.
double bucket_comm_s(const ProfileBucket& bucket, int element_bytes, const Topology& topology,
                     const PlanVariant& variant, const LinkModel& link);

// The step on `topology` with `variant`: compute + exposed communication; on one machine whose link has its CPU
// cost measured, compute + the larger of the exposed communication and the all-reduces' CPU over the machine's
// cores (the ranks fill the cores, so that CPU comes out of compute, while the link waits on neither); on one
// machine with the link beside compute, each all-reduce at that pace until backward ends (overlap.h). Throws
// ft::Error when a level it needs is missing from the link model or from a given link beside compute (between
// nodes for several nodes; inside a node for several ranks per node) or a profile is missing.
PlanRow predict(const PlanInputs& inputs, const Topology& topology, const PlanVariant& variant);

}  // namespace ft
