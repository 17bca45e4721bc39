// Tests of plan/prediction.cpp and plan/step_profile.cpp against steps worked out by hand: the compute of the
// profile plus what the last all-reduce leaves after backward, PowerSGD's factors per bucket, the profile a
// topology computes with, and the names of the all-reduces.
#include "plan/prediction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/error.h"

namespace ft {
namespace {

// 100 ms forward, 200 ms backward, 50 ms optimizer at batch 32; two buckets of 1e6 fp32 elements ready at
// 50 ms and at backward's end.
StepProfile profile(int ranks = 1, double scale = 1) {
  StepProfile p;
  p.source = "hand";
  p.batch = 32;
  p.ranks = ranks;
  p.forward_s = 0.1 * scale, p.backward_s = 0.2 * scale, p.optimizer_s = 0.05 * scale;
  p.buckets = {{1000000, 0.05 * scale, {{1000, 1000}}}, {1000000, 0.2 * scale, {{1000000}}}};
  return p;
}

PlanInputs inputs() {
  PlanInputs in;
  in.profiles = {profile()};
  in.link.inter = {0, 1e-9};
  in.link.intra = {0, 1e-10};
  return in;
}

std::string error_of(const PlanInputs& in, const Topology& t, const std::string& variant) {
  try {
    predict(in, t, parse_variant(variant));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(StepPrediction, OneRankIsItsProfile) {
  const PlanRow r = predict(inputs(), {1, 1}, parse_variant("flat"));
  EXPECT_DOUBLE_EQ(r.step_s, 0.35);
  EXPECT_EQ(r.comm_s, 0);
  EXPECT_DOUBLE_EQ(r.efficiency, 1);
  EXPECT_DOUBLE_EQ(r.images_per_s, 32 / 0.35);
}

TEST(StepPrediction, TheLastBucketsAllReduceIsExposed) {
  // 2 nodes: each 4 MB bucket takes 2 x 1/2 x 4e6 x 1e-9 = 4 ms; the second starts at 200 ms, when backward ends.
  const PlanRow r = predict(inputs(), {2, 1}, parse_variant("flat"));
  EXPECT_DOUBLE_EQ(r.comm_s, 0.008);
  EXPECT_NEAR(r.exposed_s, 0.004, 1e-15);
  EXPECT_NEAR(r.step_s, 0.354, 1e-15);
  EXPECT_NEAR(r.images_per_s, 64 / 0.354, 1e-9);
  EXPECT_NEAR(r.efficiency, 0.35 / 0.354, 1e-15);
}

TEST(StepPrediction, AFasterDeviceScalesComputeAndReadiness) {
  // Twice as fast: 175 ms of compute, the second bucket ready at backward's end (100 ms), 4 ms exposed of the
  // same link; efficiency against the scaled 1-rank step.
  PlanInputs in = inputs();
  in.compute_scale = 0.5;
  const PlanRow r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_DOUBLE_EQ(r.compute_s, 0.175);
  EXPECT_NEAR(r.exposed_s, 0.004, 1e-15);
  EXPECT_NEAR(r.efficiency, 0.175 / 0.179, 1e-15);
  in.compute_scale = 0;
  EXPECT_THROW(predict(in, {2, 1}, parse_variant("flat")), Error);
}

TEST(StepPrediction, HalfWiresHalveTheBytes) {
  const PlanRow r = predict(inputs(), {2, 1}, parse_variant("flat+bf16"));
  EXPECT_DOUBLE_EQ(r.comm_s, 0.004);
  EXPECT_NEAR(r.exposed_s, 0.002, 1e-15);
}

TEST(StepPrediction, PowerSgdSendsFactorsOfTheMatricesOnly) {
  // Bucket 0, a 1000 x 1000 matrix at rank 4: P 4000 elements then Q 4000, 16 kB each; bucket 1, a vector,
  // whole: 4 MB. 2 nodes: 16 us + 16 us + 4 ms.
  const PlanRow r = predict(inputs(), {2, 1}, parse_variant("flat+powersgd:4"));
  EXPECT_NEAR(r.comm_s, 2 * 16000e-9 + 0.004, 1e-15);
}

TEST(StepPrediction, EachBucketsAllReducesInWireBytes) {
  const ProfileBucket matrix{1000000, 0, {{1000, 1000}}}, small{16, 0, {{8, 2}}};
  EXPECT_EQ(bucket_allreduce_bytes(matrix, 4, parse_variant("flat")), std::vector<double>{4e6});
  EXPECT_EQ(bucket_allreduce_bytes(matrix, 4, parse_variant("flat+fp16")), std::vector<double>{2e6});
  // PowerSGD at rank 4: P (1000 x 4) then Q (1000 x 4); a bucket with nothing to compress goes whole, once.
  EXPECT_EQ(bucket_allreduce_bytes(matrix, 4, parse_variant("hierarchical+powersgd:4")),
            (std::vector<double>{16000, 16000}));
  EXPECT_EQ(bucket_allreduce_bytes(small, 4, parse_variant("flat+powersgd:4")), std::vector<double>{64});
}

TEST(StepPrediction, PowerSgdElementsPerBucket) {
  // A 3x3 convolution of 64 to 64 channels and its bias: [64, 576] at k = 4 sends 64 x 4, then 576 x 4.
  ProfileBucket conv{64 * 64 * 9 + 64, 0, {{64, 64, 3, 3}, {64}}};
  PowerSgdElements e = powersgd_elements(conv, 4);
  EXPECT_EQ(e.first, 64 * 4 + 64);
  EXPECT_EQ(e.second, 576 * 4);
  // (n + m) k 2 < n m exactly: [4, 4] at rank 1 is 16 against 16, not worth it; [5, 4] is 18 against 20.
  e = powersgd_elements({16, 0, {{4, 4}}}, 1);
  EXPECT_EQ(e.first, 16);
  EXPECT_EQ(e.second, 0);
  e = powersgd_elements({20, 0, {{5, 4}}}, 1);
  EXPECT_EQ(e.first, 5);
  EXPECT_EQ(e.second, 4);
  // k is at most the smaller side: [8, 2] at rank 4 has k = 2, (8 + 2) 2 2 = 40 >= 16: sent whole.
  e = powersgd_elements({16, 0, {{8, 2}}}, 4);
  EXPECT_EQ(e.first, 16);
  EXPECT_EQ(e.second, 0);
}

TEST(StepPrediction, OneMachineTakesTheComputeMeasuredWithThatManyRanks) {
  PlanInputs in = inputs();
  in.one_machine = true;
  in.profiles.push_back(profile(2, 2));  // two ranks at once: every phase twice as long
  const PlanRow r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_EQ(r.profile_ranks, 2);
  EXPECT_DOUBLE_EQ(r.compute_s, 0.7);
  EXPECT_EQ(r.comm_cpu_s, 0);  // the link's CPU was not measured: nothing charged
  EXPECT_NEAR(r.efficiency, 0.35 / (0.7 + 0.004), 1e-15);  // against the 1-rank step
  EXPECT_NE(error_of(in, {3, 1}, "flat").find("mpirun -np 3 fusetrain plan profile"), std::string::npos);
}

TEST(StepPrediction, OnOneMachineTheAllReducesCpuComesOutOfCompute) {
  // 2 nodes, ranks filling a 2-core machine, 1 ns of its CPU per byte a rank sends: each 4 MB bucket costs
  // 2 ranks x 4e6 bytes x 1 ns = 8 ms, 16 ms the step, 8 ms on each core: more than the 4 ms exposed.
  PlanInputs in = inputs();
  in.one_machine = true;
  in.profiles.push_back(profile(2));
  in.link.inter = {0, 1e-9, -1, 1e-9, 2};
  PlanRow r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_NEAR(r.exposed_s, 0.004, 1e-15);
  EXPECT_NEAR(r.comm_cpu_s, 0.008, 1e-15);
  EXPECT_NEAR(r.step_s, 0.358, 1e-15);
  EXPECT_NEAR(r.efficiency, 0.35 / 0.358, 1e-15);
  // Half the CPU: exactly the exposed time; a quarter: the exposed communication is what the step waits for.
  in.link.inter.cpu_s_per_byte = 0.5e-9;
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat")).step_s, 0.354, 1e-15);
  in.link.inter.cpu_s_per_byte = 0.25e-9;
  r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_NEAR(r.comm_cpu_s, 0.002, 1e-15);
  EXPECT_NEAR(r.step_s, 0.354, 1e-15);
  // The wire's bytes: bf16 halves the CPU; PowerSGD at rank 4 sends [1000, 1000]'s two factors of 4000 elements
  // and the vector whole: (8000 + 1e6) x 4 bytes x 2 ranks x 1 ns over 2 cores.
  in.link.inter.cpu_s_per_byte = 1e-9;
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat+bf16")).comm_cpu_s, 0.004, 1e-15);
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat+powersgd:4")).comm_cpu_s, 1008000 * 4 * 1e-9, 1e-15);
  // Four cores share the same CPU: half on each.
  in.link.inter.cpu_cores = 4;
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat")).comm_cpu_s, 0.004, 1e-15);
  // One node of 2 ranks: the level inside a node, 1e-9 s a byte counted on 2 cores, whatever the inter level has.
  in.link.intra = {0, 1e-10, -1, 1e-9, 2};
  in.link.inter.cpu_s_per_byte = 5e-9;
  EXPECT_NEAR(predict(in, {1, 2}, parse_variant("flat")).comm_cpu_s, 0.008, 1e-15);
  // One rank sends nothing; ranks each on a machine of their own do not share its cores.
  EXPECT_EQ(predict(in, {1, 1}, parse_variant("flat")).comm_cpu_s, 0);
  in.one_machine = false;
  r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_EQ(r.comm_cpu_s, 0);
  EXPECT_NEAR(r.step_s, 0.354, 1e-15);
}

TEST(StepPrediction, OnOneMachineAnAllReduceRunsAtItsPaceBesideComputeUntilBackwardEnds) {
  // Each 4 MB bucket takes 4 ms alone and 160 ms beside compute (40 ns a byte). Bucket 0, ready at 50 ms, has
  // done 150/160 of its work when backward ends at 200 ms, the rest takes 1/16 of 4 ms: it ends at 200.25 ms;
  // bucket 1 (ready at 200) then takes its 4 ms alone: 4.25 ms exposed.
  PlanInputs in = inputs();
  in.one_machine = true;
  in.profiles.push_back(profile(2));
  in.beside_compute.inter = {0, 40e-9};
  PlanRow r = predict(in, {2, 1}, parse_variant("flat"));
  EXPECT_NEAR(r.exposed_s, 0.00425, 1e-15);
  EXPECT_NEAR(r.comm_s, 0.15025 + 0.004, 1e-15);
  EXPECT_NEAR(r.step_s, 0.35425, 1e-15);
  // A pace beside compute that ends bucket 0 before backward's end changes nothing the step waits for.
  in.beside_compute.inter = {0, 4e-9};
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat")).step_s, 0.354, 1e-15);
  // Ranks each on a machine of their own: no compute beside their all-reduces but their own rank's.
  in.beside_compute.inter = {0, 40e-9};
  in.one_machine = false;
  EXPECT_NEAR(predict(in, {2, 1}, parse_variant("flat")).step_s, 0.354, 1e-15);
  // Given, the link beside compute must have every level the topology needs, as the link must.
  in.one_machine = true;
  in.beside_compute.inter = {};
  in.beside_compute.intra = {0, 1e-10};
  const std::string error = error_of(in, {2, 1}, "flat");
  EXPECT_NE(error.find("needs the link beside compute between nodes (level inter)"), std::string::npos) << error;
  EXPECT_NE(error.find("--level inter --beside-compute 1"), std::string::npos) << error;
}

TEST(StepPrediction, MissingLevelsAndBaselineAreNamed) {
  PlanInputs in = inputs();
  in.link.inter = {};
  EXPECT_NE(error_of(in, {2, 1}, "flat").find("level inter"), std::string::npos);
  EXPECT_EQ(error_of(in, {1, 4}, "flat"), "");  // one node needs no link between nodes
  in = inputs();
  in.link.intra = {};
  EXPECT_NE(error_of(in, {2, 4}, "hierarchical").find("level intra"), std::string::npos);
  EXPECT_EQ(error_of(in, {2, 4}, "flat"), "");  // the flat ring runs at the inter-node hop
  in = inputs();
  in.profiles[0].ranks = 2;
  EXPECT_NE(error_of(in, {1, 1}, "flat").find("no profile measured on 1 rank"), std::string::npos);
}

TEST(StepPrediction, AllReduceNames) {
  for (const std::string name : {"flat", "hierarchical", "flat+fp16", "hierarchical+bf16", "flat+powersgd:4"})
    EXPECT_EQ(parse_variant(name).name(), name);
  EXPECT_EQ(parse_variant("flat+fp32").name(), "flat");
  for (const std::string bad : {"ring", "flat+fp8", "flat+powersgd:0", "flat+powersgd:x", "flat+powersgd:", ""})
    EXPECT_THROW(parse_variant(bad), Error) << bad;
}

TEST(StepPrediction, ProfileChecks) {
  StepProfile p = profile();
  EXPECT_NO_THROW(check_profile(p, "p.json"));
  p.buckets[0].ready_s = 0.3;
  EXPECT_THROW(check_profile(p, "p.json"), Error);
  p = profile();
  p.buckets[0].elements = 999;  // its shape holds 1e6
  try {
    check_profile(p, "p.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: bucket 0's shapes hold 1000000 elements, not 999"), std::string::npos);
  }
  p = profile();
  p.batch = 0;
  EXPECT_THROW(check_profile(p, "p.json"), Error);
}

}  // namespace
}  // namespace ft
