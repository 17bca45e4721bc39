// Tests of plan/plan_files.cpp: profiles and link files read back as written, a sweep of one level keeps the
// other, and a file with a missing or malformed key is refused naming the file and the key.
#include "plan/plan_files.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "io/paths.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string write(const std::string& name, const std::string& body) {
  const std::string path = paths::join(test::temp_dir(), name);
  std::ofstream(path) << body;
  return path;
}

// Merges `record` into the file at `path` as `bench allreduce --fit` does (read first, then written).
void merge(const std::string& path, const LinkLevelRecord& record, double ring_min_bytes) {
  const std::string body = link_json(merge_link_level(path, record, ring_min_bytes));
  std::ofstream(path) << body;
}

std::string read_error(const std::string& path, bool profile) {
  try {
    profile ? (void)read_profile(path) : (void)read_link(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

StepProfile sample_profile() {
  StepProfile p;
  p.model = "resnet18", p.device = "cpu", p.source = "fusetrain plan profile";
  p.batch = 32, p.ranks = 2, p.steps = 5;
  p.forward_s = 0.25, p.backward_s = 0.5, p.optimizer_s = 0.03, p.data_s = 0.001;
  p.buckets = {{10, 0.1, {{2, 5}}}, {7, 0.5, {{7}}}};
  return p;
}

TEST(PlanFiles, ProfileRoundTrip) {
  const StepProfile p = sample_profile();
  const StepProfile q = read_profile(write("plan-profile.json", profile_json(p)));
  EXPECT_EQ(q.model, "resnet18");
  EXPECT_EQ(q.ranks, 2);
  EXPECT_EQ(q.batch, 32);
  EXPECT_DOUBLE_EQ(q.compute_s(), p.compute_s());
  ASSERT_EQ(q.buckets.size(), 2u);
  EXPECT_EQ(q.buckets[0].shapes, (std::vector<std::vector<std::int64_t>>{{2, 5}}));
  EXPECT_DOUBLE_EQ(q.buckets[1].ready_s, 0.5);
}

TEST(PlanFiles, MissingAndMalformedKeysAreNamed) {
  std::string body = profile_json(sample_profile());
  const std::string no_forward = write("plan-no-forward.json",
                                       body.replace(body.find("\"forward_s\""), 11, "\"forwards\""));
  EXPECT_EQ(read_error(no_forward, true), no_forward + ": 'forward_s' is missing or not a number");
  const std::string garbage = write("plan-garbage.json", "{not json");
  EXPECT_EQ(read_error(garbage, true), garbage + ": not valid JSON");
  const std::string other = write("plan-other.json", "{\"format\": \"fusetrain-link\", \"format_version\": 1}");
  EXPECT_NE(read_error(other, true).find("not a fusetrain-profile file"), std::string::npos);
  EXPECT_NE(read_error(paths::join(test::temp_dir(), "plan-absent.json"), false).find("cannot read"), std::string::npos);
}

TEST(PlanFiles, ASweepReplacesItsLevelAndKeepsTheOther) {
  const std::string path = paths::join(test::temp_dir(), "plan-link.json");
  std::remove(path.c_str());
  LinkLevelRecord inter{"inter", {1e-4, 8e-9}, 2, 2, "mpi", "2026-11-28T10:00:00Z", {{4096, 1e-4, false}, {1 << 20, 9e-3}}};
  merge(path, inter, 1 << 20);
  LinkLevelRecord intra{"intra", {1e-6, 1e-10}, 2, 1, "mpi", "2026-11-28T10:01:00Z", {{4096, 1e-6}, {1 << 20, 2e-4}}};
  merge(path, intra, 1 << 20);
  inter.fit = {2e-4, 9e-9};
  merge(path, inter, 0);
  const LinkFile link = read_link(path);
  EXPECT_EQ(link.levels.size(), 2u);
  EXPECT_DOUBLE_EQ(link.model.inter.alpha_s, 2e-4);
  EXPECT_DOUBLE_EQ(link.model.intra.beta_s_per_byte, 1e-10);
  EXPECT_EQ(link.model.ring_min_bytes, 0);
  // What the merge returns holds the same model as the file it writes: each fit under its own level.
  const LinkFile merged = merge_link_level(path, intra, 0);
  EXPECT_DOUBLE_EQ(merged.model.intra.alpha_s, 1e-6);
  EXPECT_DOUBLE_EQ(merged.model.inter.alpha_s, 2e-4);
  EXPECT_DOUBLE_EQ(merge_link_level(path, inter, 0).model.inter.alpha_s, 2e-4);
  EXPECT_DOUBLE_EQ(merge_link_level(path, inter, 0).model.intra.alpha_s, 1e-6);
  for (const auto& level : link.levels)
    if (level.level == "inter") {
      ASSERT_EQ(level.samples.size(), 2u);
      EXPECT_FALSE(level.samples[0].ring);  // MPI_Iallreduce's sample
      EXPECT_TRUE(level.samples[1].ring);
    }
  const std::string bad = write("plan-bad-level.json", "{\"format\": \"fusetrain-link\", \"format_version\": 1, "
                                "\"ring_min_bytes\": 0, \"levels\": {\"rack\": {}}}");
  EXPECT_EQ(read_error(bad, false), bad + ": level 'rack' is neither intra nor inter");
}

TEST(PlanFiles, TheMachinesCpuPerByteReadsBackAndIsOptional) {
  LinkLevelRecord inter{"inter", {1e-4, 8e-9, 2e-4, 3e-9, 2}, 2, 2, "gloo", "2026-11-29T19:00:00Z",
                        {{4096, 1e-4, true, 0.5}, {1 << 20, 9e-3}}};
  LinkFile file;
  file.levels = {inter};
  // The rate beside beta, for people reading the file: 8 ns a byte is 1 Gbit/s.
  EXPECT_NE(link_json(file).find("\"gbit_s\": 1.0"), std::string::npos) << link_json(file);
  const std::string path = write("plan-link-cpu.json", link_json(file));
  const LinkFile link = read_link(path);
  EXPECT_DOUBLE_EQ(link.model.inter.cpu_s_per_byte, 3e-9);
  EXPECT_EQ(link.model.inter.cpu_cores, 2);
  ASSERT_EQ(link.levels[0].samples.size(), 2u);
  EXPECT_DOUBLE_EQ(link.levels[0].samples[0].cpu_s, 0.5);
  EXPECT_EQ(link.levels[0].samples[1].cpu_s, -1);
  // A file from a sweep that did not count the CPU: none, as then.
  std::string body = link_json(file);
  body.replace(body.find("\"cpu_s_per_byte\""), 16, "\"cpu_unused\"");
  const LinkFile older = read_link(write("plan-link-older.json", body));
  EXPECT_EQ(older.model.inter.cpu_s_per_byte, 0);
  EXPECT_FALSE(older.model.inter.cpu_known());
  // A cost without the cores it was counted on, or a negative one, is refused by name.
  body = link_json(file);
  const std::string no_cores = write("plan-link-no-cores.json", body.replace(body.find("\"cpu_cores\""), 11, "\"cores\""));
  EXPECT_EQ(read_error(no_cores, false), no_cores + " level inter: 'cpu_cores' is missing or not a whole number");
  body = link_json(file);
  const std::string negative = write("plan-link-negative.json", body.replace(body.find("3e-09"), 5, "-3e-09"));
  EXPECT_NE(read_error(negative, false).find("cpu_s_per_byte and cpu_cores must be >= 0"), std::string::npos)
      << read_error(negative, false);
}

TEST(PlanFiles, ASweepBesideComputeSaysSoAndAnIdleOneIsZero) {
  LinkLevelRecord inter{"inter", {1e-4, 8e-9}, 2, 2, "gloo", "2026-11-29T22:00:00Z", {{4096, 1e-4}, {1 << 20, 9e-3}}};
  inter.beside_compute = 1;
  LinkFile file;
  file.levels = {inter};
  EXPECT_EQ(read_link(write("plan-link-beside.json", link_json(file))).levels[0].beside_compute, 1);
  // A file from before the key: swept on an idle machine.
  std::string body = link_json(file);
  body.replace(body.find("\"beside_compute\""), 16, "\"beside_unused\"");
  EXPECT_EQ(read_link(write("plan-link-idle.json", body)).levels[0].beside_compute, 0);
  body = link_json(file);
  const std::string negative =
      write("plan-link-beside-negative.json", body.replace(body.find("\"beside_compute\": 1"), 19, "\"beside_compute\": -1"));
  EXPECT_EQ(read_error(negative, false), negative + " level inter: beside_compute must be >= 0");
}

TEST(PlanFiles, PredictionsNameTheirRows) {
  PlanInputs in;
  in.profiles = {sample_profile()};
  PlanRow row{{4, 2}, parse_variant("flat+bf16"), 2};
  row.step_s = 0.9;
  const std::string json = plan_json(in, {row});
  EXPECT_NE(json.find("\"allreduce\": \"flat+bf16\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"devices\": 8"), std::string::npos) << json;
  EXPECT_NE(json.find("\"format\": \"fusetrain-plan\""), std::string::npos) << json;
}

}  // namespace
}  // namespace ft
