// A run's name against the files of earlier runs: a finished run's name is never reused (numbered names
// instead), an interrupted run's name is, output.overwrite takes the name as given, and the traces it configures
// are claimed for every rank and profiling cycle.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "checkpoint/run_outputs.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

struct Folder {
  std::set<std::string> finished, interrupted;
  std::string choose(const std::string& wanted, bool overwrite = false) const {
    return choose_run_name(
        wanted, overwrite, [&](const std::string& n) { return finished.count(n) > 0; },
        [&](const std::string& n) { return interrupted.count(n) > 0; });
  }
};

TEST(RunName, AFreeNameIsTakenAsGiven) { EXPECT_EQ(Folder{}.choose("quickstart"), "quickstart"); }

TEST(RunName, AFinishedRunsNameIsNumbered) {
  const Folder folder{{"quickstart", "quickstart-2"}, {}};
  EXPECT_EQ(folder.choose("quickstart"), "quickstart-3");
  EXPECT_EQ(folder.choose("other"), "other");
}

TEST(RunName, AnInterruptedRunResumesUnderItsOwnName) {
  // The first rerun was numbered, then pre-empted: its restart finds it again, not a fresh name.
  const Folder folder{{"quickstart"}, {"quickstart-2"}};
  EXPECT_EQ(folder.choose("quickstart"), "quickstart-2");
  // A run that wrote its results but died before removing its checkpoint resumes in place too.
  const Folder both{{"case"}, {"case"}};
  EXPECT_EQ(both.choose("case"), "case");
}

TEST(RunName, OverwriteTakesTheNameAsGiven) {
  const Folder folder{{"quickstart", "quickstart-2"}, {}};
  EXPECT_EQ(folder.choose("quickstart", true), "quickstart");
}

// A 2-rank run profiling 2 cycles writes trace.json (rank 0, cycle 1), trace.cycle2.json, trace.rank1.json and
// trace.rank1.cycle2.json: an earlier run's file under any of those names is kept and the run refused, unless it
// resumes; a name no rank or cycle of this run writes is left alone.
TEST(RunOutputs, EveryRanksTraceOfEveryCycleIsClaimed) {
  const std::string dir = paths::join(ft::test::temp_dir(), "run_outputs/traces");
  Config config;
  config.output.dir = dir;
  config.profile.trace = paths::join(dir, "trace.json");
  config.profile.repeat = 2;
  RunPaths run;
  run.results = paths::join(dir, "run.h5");
  run.checkpoint = paths::join(dir, "run.ckpt");
  const auto error_with = [&](const std::string& existing, bool resumes) {
    paths::remove_all(dir);
    paths::create_directories(dir);
    std::ofstream(paths::join(dir, existing)) << "an earlier run's trace";
    run.resumes = resumes;
    try {
      claim_run_outputs(config, run, 2);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const std::string name : {"trace.json", "trace.cycle2.json", "trace.rank1.json", "trace.rank1.cycle2.json"}) {
    const std::string e = error_with(name, false);
    EXPECT_NE(e.find(cat("profile.trace ", paths::join(dir, name), " exists and is kept")), std::string::npos)
        << name << ": " << e;
    EXPECT_EQ(error_with(name, true), "") << name << ": a resumed run writes its traces again";
  }
  for (const std::string name : {"trace.rank2.json", "trace.cycle3.json"})
    EXPECT_EQ(error_with(name, false), "") << name << ": no rank or cycle of this run writes it";
}

}  // namespace
}  // namespace ft
