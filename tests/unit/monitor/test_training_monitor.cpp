// What people watching a run get, short of TensorBoard's reader (tests/e2e/tensorboard.sh): the device is read
// only at the TensorBoard cadence, not every step; ranks other than 0 write nothing; a fresh start sets an
// earlier run's event files aside (or removes them under output.overwrite) while a resume adds its file after
// the earlier ones; progress text, times left and the plain/terminal forms of the line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "file_size_limit.h"
#include "io/paths.h"
#include "monitor/event_file.h"
#include "monitor/progress.h"
#include "monitor/tensorboard_log.h"
#include "monitor/training_monitor.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string fresh_dir(const std::string& name) {
  const std::string dir = ft::test::temp_dir() + "/monitor_" + std::to_string(getpid()) + "_" + name;
  paths::remove_all(dir);
  paths::create_directories(dir);
  return dir;
}

Config watched_config(int every) {
  Config c;
  c.train.epochs = 2;
  c.output.tensorboard_every = every;
  c.output.progress_every_s = 0;
  return c;
}

MonitorSetup setup_in(const std::string& dir, int rank) {
  MonitorSetup s;
  s.rank = rank;
  s.checkpoint_path = paths::join(dir, "run.ckpt");
  s.steps_per_epoch = 10;
  s.images_per_step = 64;
  s.rank_images_per_step = 32;
  s.config_yaml = "model: {name: simple_cnn}\n";
  return s;
}

// Runs `epochs` epochs of 10 steps and returns how often the device was read.
int reads_over(TrainingMonitor& monitor, int epochs) {
  int reads = 0;
  std::int64_t global = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    monitor.begin_epoch(epoch, 0);
    for (std::int64_t step = 1; step <= 10; ++step)
      monitor.after_step(++global, step, [&] { return ++reads, StepReading{0.5 * 32 * step, 0.1, 0, 0}; });
    EpochRecord record;
    record.epoch = epoch;
    monitor.end_epoch(global, record, {});
  }
  return reads;
}

TEST(TrainingMonitor, ReadsTheDeviceOnlyAtTheCadence) {
  const std::string dir = fresh_dir("cadence");
  TrainingMonitor monitor(watched_config(4), setup_in(dir, 0));
  EXPECT_EQ(reads_over(monitor, 2), 4);  // steps 4 and 8 of each epoch
  EXPECT_EQ(event_files_in(paths::join(dir, "run.tb")).size(), 1u);
}

TEST(TrainingMonitor, PerEpochOnlyAtZeroAndNothingOnOtherRanks) {
  const std::string dir = fresh_dir("quiet");
  TrainingMonitor epochs_only(watched_config(0), setup_in(dir, 0));
  EXPECT_EQ(reads_over(epochs_only, 2), 0);
  const std::string other = fresh_dir("rank1");
  TrainingMonitor rank1(watched_config(1), setup_in(other, 1));
  EXPECT_EQ(reads_over(rank1, 1), 0);
  EXPECT_FALSE(paths::exists(paths::join(other, "run.tb")));
}

TEST(TrainingMonitor, OffWithoutTheKeyOrACheckpointPath) {
  const std::string dir = fresh_dir("off");
  Config c = watched_config(1);
  c.output.tensorboard = false;
  TrainingMonitor off(c, setup_in(dir, 0));
  EXPECT_EQ(reads_over(off, 1), 0);
  EXPECT_FALSE(paths::exists(paths::join(dir, "run.tb")));
}

void touch(const std::string& path) { std::ofstream(path) << "x"; }

// output.overwrite removes an earlier run's event files only under a name of the run's own: without
// output.name the folder is named after the config, which every run of it shares, so they are set aside.
TEST(TrainingMonitor, OverwriteRemovesEarlierEventFilesOnlyForANamedRun) {
  for (const bool named : {false, true}) {
    for (const bool overwrite : {false, true}) {
      const std::string dir = fresh_dir(std::string("policy_") + (named ? "named" : "unnamed") +
                                        (overwrite ? "_overwrite" : ""));
      const std::string folder = paths::join(dir, "run.tb");
      paths::create_directories(folder);
      touch(paths::join(folder, "events.out.tfevents.1000.host"));
      Config c = watched_config(1);
      c.output.overwrite = overwrite;
      c.output.name = named ? "run" : "";
      { TrainingMonitor monitor(c, setup_in(dir, 0)); }
      const bool removed = named && overwrite;
      const std::string where = std::string(named ? "named" : "unnamed") + (overwrite ? ", overwrite" : "");
      EXPECT_EQ(paths::exists(paths::join(dir, "run.tb.1/events.out.tfevents.1000.host")), !removed) << where;
      EXPECT_FALSE(paths::exists(paths::join(folder, "events.out.tfevents.1000.host"))) << where;
      EXPECT_EQ(event_files_in(folder).size(), 1u) << where << ": this run's file alone";
    }
  }
}

// The loss each progress line shows, by step: "step S/10 ... loss L".
std::map<std::int64_t, double> progress_losses(const std::string& out) {
  std::map<std::int64_t, double> losses;
  const std::regex line(R"(step (\d+)/10 .* loss ([0-9.]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    losses[std::stoll((*it)[1])] = std::stod((*it)[2]);
  return losses;
}

// A resumed epoch's progress line means the steps this segment ran: the reading's loss sum holds only those
// steps, so the mean divides by them, not by every step of the epoch; the next epoch counts from its first step.
TEST(TrainingMonitor, ProgressAfterAResumeMidEpochMeansTheSegmentsSteps) {
  const std::string dir = fresh_dir("progress_resume");
  Config c = watched_config(0);
  c.output.progress_every_s = 1e-9;  // a line after every step
  MonitorSetup setup = setup_in(dir, 0);
  setup.start_step = 4;
  auto loss_of = [](int epoch, std::int64_t step) { return 0.1 * static_cast<double>(step) + epoch; };
  for (const int epoch : {1, 2}) {
    const std::int64_t first = epoch == 1 ? 4 : 0;  // resumed after step 4 of epoch 1
    testing::internal::CaptureStdout();
    {
      TrainingMonitor monitor(c, setup);
      monitor.begin_epoch(epoch, first);
      double sum = 0;
      for (std::int64_t step = first + 1; step <= 10; ++step) {
        sum += loss_of(epoch, step) * 32;  // rank 0's 32 images of the step
        monitor.after_step(step, step, [&] { return StepReading{sum, 0.1, 0, 0}; });
      }
    }
    const auto losses = progress_losses(testing::internal::GetCapturedStdout());
    ASSERT_FALSE(losses.empty()) << "epoch " << epoch;
    for (const auto& [step, shown] : losses) {
      double mean = 0;
      for (std::int64_t s = first + 1; s <= step; ++s) mean += loss_of(epoch, s) / static_cast<double>(step - first);
      EXPECT_NEAR(shown, mean, 6e-5) << "epoch " << epoch << " step " << step;
    }
  }
}

// An epoch's rate and times are its own: the seconds behind a progress line start at the epoch's beginning, so
// they are at most what the test measured around that epoch alone (the time between epochs not among them).
TEST(TrainingMonitor, AnEpochsRateCountsFromItsBeginning) {
  const std::string dir = fresh_dir("epoch_clock");
  Config c = watched_config(0);
  c.output.progress_every_s = 1e-9;  // a line after every step
  MonitorSetup setup = setup_in(dir, 0);
  setup.images_per_step = 1000000000;  // img/s large enough that the printed whole number keeps the seconds
  testing::internal::CaptureStdout();
  double measured = 0;
  {
    TrainingMonitor monitor(c, setup);
    monitor.begin_epoch(1, 0);
    monitor.after_step(1, 1, [] { return StepReading{32, 0.1, 0, 0}; });
    monitor.end_epoch(1, EpochRecord{}, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // between the epochs
    const Stopwatch around;
    monitor.begin_epoch(2, 0);
    monitor.after_step(2, 1, [] { return StepReading{32, 0.1, 0, 0}; });
    measured = around.seconds();
  }
  const std::string out = testing::internal::GetCapturedStdout();
  const std::regex rate(R"(epoch 2/2 step 1/10 \(10%\)  (\d+) img/s)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, rate)) << out;
  const double shown = 1e9 / std::stod(m[1]);
  EXPECT_LE(shown, measured * (1 + 1e-6)) << out;
}

// A duration_text back in seconds ("1h02m" 3720, "3m05s" 185, "42s" 42).
double duration_seconds(const std::string& text) {
  std::smatch m;
  if (std::regex_match(text, m, std::regex(R"((\d+)h(\d\d)m)"))) return 3600.0 * std::stod(m[1]) + 60 * std::stod(m[2]);
  if (std::regex_match(text, m, std::regex(R"((\d+)m(\d\d)s)"))) return 60.0 * std::stod(m[1]) + std::stod(m[2]);
  return std::stod(text.substr(0, text.size() - 1));
}

// The time an epoch spends after its last step (evaluation and the like) is what the run's time left adds per
// epoch, not the whole epoch: with 99,998 epochs still to come every second of it shows, so the time left is at
// most what the test measured (epoch 2's step, epoch 1's tail) scaled up, though epoch 1 slept before its last step.
TEST(TrainingMonitor, TimeLeftAddsWhatAnEpochSpendsAfterItsLastStep) {
  const std::string dir = fresh_dir("overhead");
  Config c = watched_config(0);
  c.train.epochs = 100000;
  c.output.progress_every_s = 1e-9;  // a line after every step
  const MonitorSetup setup = setup_in(dir, 0);
  testing::internal::CaptureStdout();
  double tail = 0, around = 0;
  {
    TrainingMonitor monitor(c, setup);
    monitor.begin_epoch(1, 0);
    for (std::int64_t step = 1; step <= 9; ++step) monitor.after_step(step, step, [] { return StepReading{}; });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a slow step, not time after the last one
    const Stopwatch after_last;
    monitor.after_step(10, 10, [] { return StepReading{}; });
    monitor.end_epoch(10, EpochRecord{}, {});
    tail = after_last.seconds();
    const Stopwatch epoch2;
    monitor.begin_epoch(2, 0);
    monitor.after_step(11, 1, [] { return StepReading{}; });
    around = epoch2.seconds();
  }
  const std::string out = testing::internal::GetCapturedStdout();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(epoch 2/100000 step 1/10 .* run (\S+))"))) << out;
  // 9 steps left of epoch 2 and its tail, then 99,998 epochs of 10 steps and a tail: under 99,999 x (10 x the
  // step + the tail), and the text is rounded to the second at most.
  const double bound = 99999 * (10 * around + tail) + 1;
  EXPECT_LE(duration_seconds(m[1]), bound) << out;
}

TEST(TensorBoardLog, FreshStartSetsAnEarlierRunAsideAndOverwriteRemovesIt) {
  const std::string dir = fresh_dir("fresh");
  const std::string folder = paths::join(dir, "run.tb");
  paths::create_directories(folder);
  touch(paths::join(folder, "events.out.tfevents.1000.host"));
  { TensorBoardLog log({folder, 0, false, "a: 1\n"}); EXPECT_TRUE(log.active()); }
  EXPECT_TRUE(paths::is_regular_file(paths::join(dir, "run.tb.1/events.out.tfevents.1000.host")));
  EXPECT_EQ(event_files_in(folder).size(), 1u);
  { TensorBoardLog log({folder, 0, true, "a: 1\n"}); }
  EXPECT_EQ(event_files_in(folder).size(), 1u);  // the earlier file removed, this one's alone
  EXPECT_FALSE(paths::exists(paths::join(dir, "run.tb.2")));
}

TEST(TensorBoardLog, AResumeAddsAFileNamedAfterTheEarlierOnes) {
  const std::string dir = fresh_dir("resume");
  const std::string folder = paths::join(dir, "run.tb");
  paths::create_directories(folder);
  const std::string later = "events.out.tfevents.4000000000.host";  // in the future: the new file must follow it
  touch(paths::join(folder, later));
  { TensorBoardLog log({folder, 25, false, "a: 1\n"}); }
  const auto files = event_files_in(folder);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(paths::filename(files[0]), later);
  EXPECT_EQ(paths::filename(files[1]).rfind("events.out.tfevents.4000000001.", 0), 0u) << files[1];
  EXPECT_EQ(session_start_step(0), 0);
  EXPECT_EQ(session_start_step(25), 26);
}

// Every earlier run set aside keeps its folder: the next takes the first number not yet taken.
TEST(TensorBoardLog, EachEarlierRunSetAsideTakesTheNextFreeNumber) {
  const std::string dir = fresh_dir("aside");
  const std::string folder = paths::join(dir, "run.tb");
  for (int run = 1; run <= 3; ++run) TensorBoardLog({folder, 0, false, "a: 1\n"});  // each finds the last one's
  EXPECT_EQ(event_files_in(folder).size(), 1u);
  EXPECT_EQ(event_files_in(folder + ".1").size(), 1u);
  EXPECT_EQ(event_files_in(folder + ".2").size(), 1u);
  EXPECT_FALSE(paths::exists(folder + ".3"));
  EXPECT_FALSE(paths::exists(folder + ".0"));
}

// A write the disk refuses during training: one warning, the log stops, and later scalars neither write nor warn.
TEST(TensorBoardLog, AWriteThatFailsWarnsOnceAndStopsTheLog) {
  const std::string dir = fresh_dir("full");
  const std::string folder = paths::join(dir, "run.tb");
  TensorBoardLog log({folder, 0, false, "a: 1\n"});
  ASSERT_TRUE(log.active());
  // The limit holds for every file of the process, the captured standard error too: the event file is made
  // longer than the warnings first.
  for (std::int64_t step = 1; step <= 100; ++step) log.scalars(step, {{"loss", 2.0}});
  const std::string file = event_files_in(folder).front();
  const auto size = static_cast<rlim_t>(paths::file_size(file));
  ASSERT_GT(size, 2048u);
  testing::internal::CaptureStderr();
  {
    const test::FileSizeLimit limit(size);
    log.scalars(101, {{"loss", 1.5}});
    log.scalars(102, {{"loss", 1.25}});
  }
  log.scalars(103, {{"loss", 1.0}});
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(log.active());
  EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 1) << warnings;
  EXPECT_EQ(warnings.rfind("warning: TensorBoard event file " + file + " cannot be written", 0), 0u) << warnings;
  EXPECT_NE(warnings.find("TensorBoard logging stops, training goes on"), std::string::npos) << warnings;
  EXPECT_EQ(paths::file_size(file), size);
}

TEST(TensorBoardLog, AFolderThatCannotBeMadeIsAWarningNotAnError) {
  const std::string dir = fresh_dir("blocked");
  const std::string folder = paths::join(dir, "run.tb");
  touch(folder);  // a file where the folder should go
  TensorBoardLog log({folder, 0, true, ""});
  EXPECT_FALSE(log.active());
  log.scalars(1, {{"a", 1}});
}

TEST(Progress, TextSaysStepThroughputLossAndTimesLeft) {
  EXPECT_EQ(duration_text(42), "42s");
  EXPECT_EQ(duration_text(185), "3m05s");
  EXPECT_EQ(duration_text(3720), "1h02m");
  const ProgressSetup setup{3, 100, 64, 30, false};
  ProgressPoint p;
  p.epoch = 2;
  p.step = 40;
  p.steps_timed = 20;  // resumed at step 20: 20 steps in 10 s, 0.5 s a step
  p.seconds = 10;
  p.loss = 0.123456;
  p.epoch_overhead_s = 5;
  // epoch: 60 steps x 0.5 s = 30 s; run: 30 + 5 (this epoch's evaluation) + 1 x (50 + 5) = 90 s
  EXPECT_EQ(progress_text(setup, p), "progress: epoch 2/3 step 40/100 (40%)  128 img/s  loss 0.1235  "
                                     "ETA epoch 30s, run 1m30s");
}

// The share of the epoch done is whole percent rounded down, 0 before the first step and 100 at the last; an
// epoch of no steps (nothing to divide by) and a segment that has timed nothing yet show 0, never a negative or
// a division by zero.
TEST(Progress, PercentAndRatesAtTheEpochsEdges) {
  const auto percent_of = [](std::int64_t steps, std::int64_t step) {
    ProgressPoint p;
    p.step = step;
    const std::string text = progress_text({1, steps, 8, 30, false}, p);
    const std::string shown = text.substr(text.find('(') + 1, text.find("%)") - text.find('(') - 1);
    return std::stoll(shown);
  };
  EXPECT_EQ(percent_of(3, 0), 0);
  EXPECT_EQ(percent_of(3, 1), 33);
  EXPECT_EQ(percent_of(3, 2), 66);
  EXPECT_EQ(percent_of(3, 3), 100);
  EXPECT_EQ(percent_of(200, 199), 99);
  EXPECT_EQ(percent_of(0, 0), 0);
  EXPECT_EQ(progress_text({1, 0, 8, 30, false}, ProgressPoint{}),
            "progress: epoch 1/1 step 0/0 (0%)  0 img/s  loss 0.0000  ETA epoch 0s, run 0s");
}

TEST(Progress, PlainLinesOffATerminalAndOneRewrittenLineOnIt) {
  ProgressPoint p;
  p.step = 1;
  p.steps_timed = 1;
  p.seconds = 1;
  testing::internal::CaptureStdout();
  { Progress plain({1, 10, 32, 30, false}); plain.show(p); plain.show(p); }
  const std::string lines = testing::internal::GetCapturedStdout();
  EXPECT_EQ(lines.find('\r'), std::string::npos);
  EXPECT_EQ(lines.rfind("progress: epoch 1/1 step 1/10", 0), 0u) << lines;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2);

  testing::internal::CaptureStdout();
  { Progress line({1, 10, 32, 30, true}); line.show(p); line.clear(); }
  const std::string terminal = testing::internal::GetCapturedStdout();
  EXPECT_EQ(terminal.find('\n'), std::string::npos);
  EXPECT_EQ(terminal.rfind("\rprogress: epoch 1/1 step 1/10", 0), 0u) << terminal;
  EXPECT_EQ(terminal.back(), '\r');  // erased: the next line starts at the left margin
}

TEST(Progress, DueAfterItsIntervalAndNeverWhenOff) {
  Progress off({1, 10, 32, 0, false});
  EXPECT_FALSE(off.due());
  Progress soon({1, 10, 32, 1e-9, false});
  EXPECT_TRUE(soon.due());
  Progress later({1, 10, 32, 3600, false});
  EXPECT_FALSE(later.due());
}

}  // namespace
}  // namespace ft
