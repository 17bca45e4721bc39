// A run's name against the files of earlier runs: a finished run's name is never reused (numbered names
// instead), an interrupted run's name is, output.overwrite takes the name as given, and the traces it configures
// are claimed for every rank and profiling cycle.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <vector>

#include "checkpoint/run_outputs.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "test_paths.h"
#include "test_world.h"

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

// A folder holding `files` (empty files; names ending in '/' are folders), and the paths a run of `name` ("" for
// none) would take there.
struct Policy {
  std::string dir = paths::join(ft::test::temp_dir(), "run_outputs/policy");
  Config config;
  Policy(const std::vector<std::string>& files, const std::string& name, bool overwrite) {
    paths::remove_all(dir);
    paths::create_directories(dir);
    for (const auto& f : files) {
      if (f.back() == '/') paths::create_directories(paths::join(dir, f));
      else std::ofstream(paths::join(dir, f)) << "an earlier run's file";
    }
    config.data.path = "/data/fashion";
    config.output.dir = dir;
    config.output.name = name;
    config.output.overwrite = overwrite;
  }
  RunPaths paths() const { return run_paths(config, test::world()); }
  std::string in(const std::string& file) const { return paths::join(dir, file); }
};

// A named run under every policy, against the rule worked out for each folder: a finished run's name (its results
// or model file, not a folder of that name) is numbered unless output.overwrite; a checkpoint of the name (or of
// a numbered one) is that run interrupted, which resumes there; results, model and checkpoint share the name.
TEST(RunOutputs, NamedRunUnderEveryPolicy) {
  struct Case {
    std::vector<std::string> files;
    bool overwrite;
    std::string name;
    bool resumes;
    std::string renamed_from;
  };
  const std::vector<Case> cases = {
      {{}, false, "exp", false, ""},
      {{"exp.h5"}, false, "exp-2", false, "exp"},
      {{"exp.model"}, false, "exp-2", false, "exp"},
      {{"exp.h5", "exp-2.model"}, false, "exp-3", false, "exp"},
      {{"exp.h5/"}, false, "exp", false, ""},
      {{"exp.ckpt"}, false, "exp", true, ""},
      {{"exp.ckpt.1"}, false, "exp", true, ""},
      {{"exp.ckpt.next"}, false, "exp", true, ""},
      {{"exp.h5", "exp.ckpt"}, false, "exp", true, ""},
      {{"exp.h5", "exp-2.ckpt"}, false, "exp-2", true, "exp"},
      {{"exp.h5"}, true, "exp", false, ""},
      {{"exp.h5", "exp-2.h5"}, true, "exp", false, ""},
      {{"exp.ckpt"}, true, "exp", true, ""},
  };
  for (const auto& c : cases) {
    const Policy policy(c.files, "exp", c.overwrite);
    const RunPaths p = policy.paths();
    const std::string what = ::testing::PrintToString(c.files) + (c.overwrite ? ", overwrite" : "");
    EXPECT_EQ(p.name, c.name) << what;
    EXPECT_EQ(p.results, policy.in(c.name + ".h5")) << what;
    EXPECT_EQ(p.model, policy.in(c.name + ".model")) << what;
    EXPECT_EQ(p.checkpoint, policy.in(c.name + ".ckpt")) << what;
    EXPECT_EQ(p.resumes, c.resumes) << what;
    EXPECT_EQ(p.renamed_from, c.renamed_from) << what;
  }
  Policy no_model({}, "exp", false);
  no_model.config.output.save_model = false;
  EXPECT_EQ(no_model.paths().model, "");
}

// Without a name: results under <model>-<data folder>-<ranks>r-<UTC time>, never an earlier run's, whatever
// output.overwrite says; the checkpoint under <model>-<data folder>-<the config's digest>, the same for every run
// of one config (a restarted job finds it) and another for another config.
TEST(RunOutputs, UnnamedRunUnderEveryPolicy) {
  const std::regex results_name(R"(simple_cnn-fashion-1r-\d{8}-\d{6})");
  const std::regex checkpoint_name(R"(simple_cnn-fashion-[0-9a-f]{8,}\.ckpt)");
  std::string stem;
  for (const bool overwrite : {false, true}) {
    const Policy policy({}, "", overwrite);
    const RunPaths p = policy.paths();
    EXPECT_TRUE(std::regex_match(p.name, results_name)) << p.name;
    EXPECT_EQ(p.results, policy.in(p.name + ".h5"));
    EXPECT_EQ(p.model, policy.in(p.name + ".model"));
    EXPECT_TRUE(std::regex_match(paths::filename(p.checkpoint), checkpoint_name)) << p.checkpoint;
    EXPECT_FALSE(p.resumes);
    EXPECT_EQ(p.renamed_from, "");
    if (stem.empty()) stem = paths::filename(p.checkpoint);
    EXPECT_EQ(paths::filename(p.checkpoint), stem) << "output.overwrite is not part of the run's identity";
    const Policy resumed({stem}, "", overwrite);
    EXPECT_TRUE(resumed.paths().resumes) << "overwrite " << overwrite;
  }
  Policy other({}, "", false);
  other.config.optimizer.lr *= 2;
  EXPECT_NE(paths::filename(other.paths().checkpoint), stem) << "another config, another checkpoint";
}

// distributed.timeline: a file there already is an earlier run's, kept unless output.overwrite, or unless this run
// resumes (its own earlier segment wrote it); named or not.
TEST(RunOutputs, TimelineIsKeptUnlessOverwriteOrResume) {
  for (const std::string name : {"exp", ""}) {
    for (const bool overwrite : {false, true}) {
      for (const bool resumes : {false, true}) {
        Policy policy({"timeline.json"}, name, overwrite);
        policy.config.distributed.timeline = policy.in("timeline.json");
        RunPaths run = policy.paths();
        run.resumes = resumes;
        std::string error;
        try {
          claim_run_outputs(policy.config, run, 1);
        } catch (const Error& e) {
          error = e.what();
        }
        const std::string what = "name '" + name + "'" + (overwrite ? ", overwrite" : "") + (resumes ? ", resumes" : "");
        if (overwrite || resumes)
          EXPECT_EQ(error, "") << what;
        else
          EXPECT_NE(error.find("distributed.timeline " + policy.in("timeline.json") + " exists and is kept"),
                    std::string::npos) << what << ": " << error;
      }
    }
  }
}

}  // namespace
}  // namespace ft
