// A run's name against the files of earlier runs: a finished run's name is never reused (numbered names
// instead), an interrupted run's name is, and output.overwrite takes the name as given.
#include <gtest/gtest.h>

#include <set>

#include "checkpoint/run_outputs.h"

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

}  // namespace
}  // namespace ft
