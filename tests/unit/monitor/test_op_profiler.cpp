// Tests of the operator profiler: only the active steps' operators reach the Chrome trace (not those of
// the wait or warm-up steps), memory events are recorded, ranks get their own files, and a run ending
// inside the window still writes what was recorded.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

#include "monitor/op_profiler.h"
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

}  // namespace
}  // namespace ft
