// Tests of the operator profiler: only the active steps' operators reach the Chrome trace (not those of the
// wait or warm-up steps), memory events are recorded, ranks get their own files, a run ending inside the
// window still writes what was recorded, and on a CUDA device the profiler is attached before any capture.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "monitor/op_profiler.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_trace(const std::string& name) {
  return ft::test::temp_dir() + "/op_profiler_" + std::to_string(getpid()) + "_" + name + ".json";
}

ProfileConfig window(int wait, int warmup, int active, const std::string& trace) {
  ProfileConfig c;
  c.wait = wait, c.warmup = warmup, c.active = active, c.trace = trace;
  return c;
}

TEST(OpProfiler, TracesOnlyTheActiveStepsWithMemory) {
  const std::string path = temp_trace("window");
  std::remove(path.c_str());
  OpProfiler profiler(window(1, 1, 2, path), 0, false);
  ASSERT_TRUE(profiler.enabled());
  auto x = torch::randn({64, 64});
  torch::Tensor kept;
  torch::tanh(x), profiler.step();     // wait
  torch::cos(x), profiler.step();      // warm-up
  for (int i = 0; i < 2; ++i) {        // active: allocations that stay alive show up as memory events
    kept = torch::sigmoid(torch::mm(x, x));
    EXPECT_FALSE(profiler.written());
    profiler.step();
  }
  ASSERT_TRUE(profiler.written());
  torch::exp(x), profiler.step();      // after the window: not traced
  const std::string trace = read_all(path);
  EXPECT_NE(trace.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(trace.find("aten::sigmoid"), std::string::npos);
  EXPECT_NE(trace.find("aten::mm"), std::string::npos);
  EXPECT_NE(trace.find("[memory]"), std::string::npos);
  EXPECT_NE(trace.find("Input Dims"), std::string::npos);
  EXPECT_EQ(trace.find("aten::tanh"), std::string::npos);
  EXPECT_EQ(trace.find("aten::cos"), std::string::npos);
  EXPECT_EQ(trace.find("aten::exp"), std::string::npos);
  std::remove(path.c_str());
}

TEST(OpProfiler, ARunEndingInsideTheWindowKeepsWhatItRecorded) {
  const std::string path = temp_trace("short");
  std::remove(path.c_str());
  {
    OpProfiler profiler(window(0, 0, 10, path), 0, false);
    torch::sigmoid(torch::ones({8})), profiler.step();
  }
  EXPECT_NE(read_all(path).find("aten::sigmoid"), std::string::npos);
  std::remove(path.c_str());
}

TEST(OpProfiler, OffWithoutATraceOrBeforeTheWindow) {
  OpProfiler off(window(0, 0, 1, ""), 0, false);
  EXPECT_FALSE(off.enabled());
  off.step();
  EXPECT_EQ(off.finish(), "");
  const std::string path = temp_trace("never");
  {
    OpProfiler waiting(window(5, 1, 1, path), 0, false);
    waiting.step();
    EXPECT_EQ(waiting.finish(), "");
  }
  EXPECT_EQ(read_all(path), "");
}

TEST(OpProfiler, AnUnwritableFolderIsNamedBeforeTraining) {
  const std::string file = temp_trace("blocker");
  std::ofstream(file) << "x";
  try {
    OpProfiler profiler(window(0, 0, 1, file + "/ops.json"), 0, false);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("profile.trace " + file + "/ops.json cannot be written"), std::string::npos)
        << e.what();
  }
  std::remove(file.c_str());
}

TEST(OpProfiler, EachRankWritesItsOwnFile) {
  EXPECT_EQ(profile_trace_path("runs/ops.json", 0), "runs/ops.json");
  EXPECT_EQ(profile_trace_path("runs/ops.json", 3), "runs/ops.rank3.json");
  EXPECT_EQ(profile_trace_path("runs.d/ops", 1), "runs.d/ops.rank1");
  EXPECT_EQ(profile_trace_path("", 1), "");
  EXPECT_EQ(profile_trace_path("runs/ops.json", 0, 2), "runs/ops.cycle2.json");
  EXPECT_EQ(profile_trace_path("runs/ops.json", 1, 3), "runs/ops.rank1.cycle3.json");
}

// Through the constructor a run uses: rank 1 on the CPU records into its own file, and rank 0's name stays free.
TEST(OpProfiler, ASecondRanksProfilerRecordsIntoItsOwnFile) {
  const std::string path = temp_trace("rank");
  const std::string own = profile_trace_path(path, 1);
  std::remove(path.c_str()), std::remove(own.c_str());
  {
    OpProfiler profiler(window(1, 0, 1, path), 1, false);
    torch::tanh(torch::ones({8})), profiler.step();  // wait
    torch::sigmoid(torch::ones({8})), profiler.step();
    EXPECT_TRUE(profiler.written());
    EXPECT_EQ(profiler.path(), own);
  }
  EXPECT_NE(read_all(own).find("aten::sigmoid"), std::string::npos);
  EXPECT_EQ(read_all(own).find("aten::tanh"), std::string::npos);
  EXPECT_FALSE(std::ifstream(path).good());
  std::remove(own.c_str());
}

// repeat 2: the schedule wait 1, warm-up 1, active 2 runs twice; each cycle's active steps go to its own
// trace, and steps of the waits and warm-ups to none.
TEST(OpProfiler, RepeatedCyclesEachWriteTheirOwnTrace) {
  const std::string first = temp_trace("cycles"), second = profile_trace_path(first, 0, 2);
  std::remove(first.c_str()), std::remove(second.c_str());
  ProfileConfig config = window(1, 1, 2, first);
  config.repeat = 2;
  OpProfiler profiler(config, 0, false);
  const auto x = torch::randn({16, 16});
  torch::tanh(x), profiler.step();                            // wait
  torch::cos(x), profiler.step();                             // warm-up
  for (int i = 0; i < 2; ++i) torch::sigmoid(x), profiler.step();  // active: cycle 1
  torch::exp(x), profiler.step();                             // wait
  torch::sin(x), profiler.step();                             // warm-up
  for (int i = 0; i < 2; ++i) torch::relu(x), profiler.step();     // active: cycle 2
  torch::log1p(x), profiler.step();                           // after both: not traced
  const std::string one = read_all(first), two = read_all(second);
  EXPECT_NE(one.find("aten::sigmoid"), std::string::npos);
  EXPECT_EQ(one.find("aten::relu"), std::string::npos);
  EXPECT_NE(two.find("aten::relu"), std::string::npos);
  EXPECT_EQ(two.find("aten::sigmoid"), std::string::npos);
  for (const std::string& trace : {one, two})
    for (const char* untraced : {"aten::tanh", "aten::cos", "aten::exp", "aten::sin", "aten::log1p"})
      EXPECT_EQ(trace.find(untraced), std::string::npos) << untraced;
  std::remove(first.c_str()), std::remove(second.c_str());
}

// Stand-in profiler calls: each call and the number of steps taken when it came, for the schedule's tests.
struct CallLog final : ProfilerCalls {
  explicit CallLog(std::vector<std::string>& log, const long& steps) : log_(log), steps_(steps) {}
  void prepare() override { log_.push_back(cat("prepare@", steps_)); }
  void record() override { log_.push_back(cat("record@", steps_)); }
  void save(const std::string& path) override { log_.push_back(cat("save@", steps_, " ", path)); }
  void discard() override { log_.push_back(cat("discard@", steps_)); }
  std::vector<std::string>& log_;
  const long& steps_;
};

// Runs `steps` optimizer steps through a profiler with stand-in calls; returns the calls made.
std::vector<std::string> schedule(const ProfileConfig& config, bool cuda, long steps) {
  std::vector<std::string> log;
  long done = 0;
  OpProfiler profiler(config, 0, cuda, std::make_unique<CallLog>(log, done));
  for (long i = 1; i <= steps; ++i) done = i, profiler.step();
  return log;
}

// The graphed fast-recipe profile (wait 20, warm-up 3, active 10): on a CUDA device the profiler is attached
// before the first step, so before train.cuda_graphs captures its step (after GraphedStep's eager warm-up
// steps); on the CPU it waits as configured. The window recorded is the same.
TEST(OpProfiler, OnACudaDeviceItIsAttachedBeforeTheFirstStepAndSoBeforeTheCapture) {
  ProfileConfig config = window(20, 3, 10, "runs/fast.json");
  EXPECT_EQ(profile_prepare_step(config, true), 0);
  EXPECT_EQ(profile_prepare_step(config, false), 20);
  EXPECT_EQ(schedule(config, true, 40),
            (std::vector<std::string>{"prepare@0", "record@23", "save@33 runs/fast.json"}));
  EXPECT_EQ(schedule(config, false, 40),
            (std::vector<std::string>{"prepare@20", "record@23", "save@33 runs/fast.json"}));
}

// A second cycle on a device is attached again as soon as the first is saved; a run that ends while the
// profiler warms up detaches it, keeping nothing.
TEST(OpProfiler, EveryCycleOnACudaDeviceIsAttachedAsItBegins) {
  ProfileConfig config = window(5, 1, 2, "ops.json");
  config.repeat = 2;
  EXPECT_EQ(schedule(config, true, 20),
            (std::vector<std::string>{"prepare@0", "record@6", "save@8 ops.json", "prepare@8", "record@14",
                                      "save@16 ops.cycle2.json"}));
  EXPECT_EQ(schedule(window(5, 1, 2, "ops.json"), true, 3), (std::vector<std::string>{"prepare@0", "discard@3"}));
  EXPECT_EQ(schedule(window(5, 1, 2, "ops.json"), false, 3), std::vector<std::string>{});
}

}  // namespace
}  // namespace ft
