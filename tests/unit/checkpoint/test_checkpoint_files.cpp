// Tests of the run's checkpoint file set (src/checkpoint/checkpoint_files.h): rotation keeps the newest K in age
// order and, cut short after any rename, never holds fewer complete checkpoints than before; the choice
// takes the newest that verifies; listing and removal see exactly the rotation's names.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "io/paths.h"
#include "checkpoint/checkpoint_files.h"
#include "test_paths.h"

namespace ft {
namespace {

std::vector<std::pair<std::string, std::string>> renames_of(const RotationPlan& plan) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : plan.renames) out.emplace_back(r.from, r.to);
  return out;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(CheckpointFiles, Names) {
  EXPECT_EQ(checkpoint_name("runs/c.ckpt", 0), "runs/c.ckpt");
  EXPECT_EQ(checkpoint_name("runs/c.ckpt", 2), "runs/c.ckpt.2");
  EXPECT_EQ(next_checkpoint_name("runs/c.ckpt"), "runs/c.ckpt.next");
  EXPECT_EQ(damaged_name("runs/c.ckpt.1"), "runs/c.ckpt.1.damaged");
}

TEST(CheckpointFiles, RotationShiftsOnlyUpToTheFirstGap) {
  EXPECT_EQ(renames_of(plan_rotation("c", {}, 2)), (Pairs{{"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0}, 1)), (Pairs{{"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0}, 2)), (Pairs{{"c", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0, 1}, 2)), (Pairs{{"c", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0, 1, 2}, 3)), (Pairs{{"c.1", "c.2"}, {"c", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0, 2}, 3)), (Pairs{{"c", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(renames_of(plan_rotation("c", {1}, 2)), (Pairs{{"c.next", "c"}}));  // the newest was moved aside
  EXPECT_TRUE(plan_rotation("c", {0, 1}, 2).removals.empty());
}

TEST(CheckpointFiles, RotationDropsWhatALowerKeepNoLongerHolds) {
  const RotationPlan plan = plan_rotation("c", {0, 1, 2, 3}, 2);
  EXPECT_EQ(renames_of(plan), (Pairs{{"c", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(plan.removals, (std::vector<std::string>{"c.2", "c.3"}));
}

TEST(CheckpointFiles, OlderFilesCloseUpIntoFreeAges) {
  const RotationPlan plan = plan_rotation("c", {2, 3}, 2);  // the two newest were moved aside, keep lowered
  EXPECT_EQ(renames_of(plan), (Pairs{{"c.2", "c.1"}, {"c.next", "c"}}));
  EXPECT_EQ(plan.removals, (std::vector<std::string>{"c.3"}));
  EXPECT_EQ(renames_of(plan_rotation("c", {0, 1, 5, 9}, 4)),
            (Pairs{{"c.5", "c.3"}, {"c.1", "c.2"}, {"c", "c.1"}, {"c.next", "c"}}));
}

// Files as name -> generation (larger = newer); the rotation's steps applied one by one.
using Disk = std::map<std::string, int>;

std::vector<int> generations_newest_first(const Disk& disk) {
  CheckpointFiles files;
  for (const auto& [name, generation] : disk) {
    if (name == "c.next") files.next = true;
    else files.ages.push_back(name == "c" ? 0 : std::stoi(name.substr(2)));
  }
  std::sort(files.ages.begin(), files.ages.end());
  std::vector<int> out;
  for (const auto& path : newest_first("c", files)) out.push_back(disk.at(path));
  return out;
}

void expect_safe_at_every_step(const std::vector<int>& ages, int keep) {
  Disk disk{{"c.next", 100}};
  for (int age : ages) disk[checkpoint_name("c", age)] = 50 - age;
  const std::size_t before = disk.size() - 1;  // complete checkpoints before the save
  const RotationPlan plan = plan_rotation("c", ages, keep);
  for (const Rename& step : plan.renames) {
    ASSERT_TRUE(disk.count(step.from)) << step.from;
    disk[step.to] = disk[step.from];
    disk.erase(step.from);
    const auto order = generations_newest_first(disk);
    EXPECT_GE(order.size(), before) << "after " << step.from << " -> " << step.to;
    EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend())) << "out of age order after " << step.from;
    EXPECT_EQ(order.front(), 100) << "the new checkpoint is not the newest";
  }
  for (const auto& path : plan.removals) disk.erase(path);
  EXPECT_FALSE(disk.count("c.next"));
  EXPECT_EQ(disk.at("c"), 100);
  EXPECT_EQ(disk.size(), std::min<std::size_t>(before + 1, keep));
  const auto order = generations_newest_first(disk);
  EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend()));
}

TEST(CheckpointFiles, AKillBetweenAnyTwoRenamesKeepsAsManyCheckpointsInOrder) {
  for (int keep = 1; keep <= 4; ++keep) {
    for (const auto& ages : std::vector<std::vector<int>>{{}, {0}, {1}, {0, 1}, {0, 2}, {0, 1, 2}, {0, 1, 2, 3}, {2, 3}, {1, 4, 6}, {0, 1, 5, 9}}) {
      SCOPED_TRACE(testing::Message() << "keep " << keep << ", " << ages.size() << " files");
      expect_safe_at_every_step(ages, keep);
    }
  }
}

TEST(CheckpointFiles, ChoiceIsTheNewestThatVerifiesAndReadsNoOlderOne) {
  std::vector<std::string> asked;
  auto problem_of = [&](const std::string& path) {
    asked.push_back(path);
    return path == "c.next" ? "checksum mismatch" : path == "c" ? "no checksum" : "";
  };
  const auto choice = choose_checkpoint({"c.next", "c", "c.1", "c.2"}, problem_of);
  EXPECT_EQ(choice.chosen, "c.1");
  EXPECT_EQ(choice.damaged, (Pairs{{"c.next", "checksum mismatch"}, {"c", "no checksum"}}));
  EXPECT_EQ(asked, (std::vector<std::string>{"c.next", "c", "c.1"}));

  const auto none = choose_checkpoint({"c", "c.1"}, [](const std::string&) { return std::string("missing"); });
  EXPECT_EQ(none.chosen, "");
  EXPECT_EQ(none.damaged.size(), 2u);
  EXPECT_EQ(choose_checkpoint({}, problem_of).chosen, "");
}

// std::filesystem stays out of this LibTorch-linked binary (io/paths.h says why).
std::string scratch_dir() {
  const std::string dir = paths::join(ft::test::temp_dir(), "train/checkpoint_files");
  paths::remove_all(dir);
  paths::create_directories(dir);
  return dir;
}

void touch(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return text;
}

TEST(CheckpointFiles, ListingRotationAndRemovalOnDisk) {
  const std::string dir = scratch_dir();
  const auto in_dir = [&](const std::string& name) { return paths::join(dir, name); };
  const std::string base = in_dir("c.ckpt");
  for (const char* name : {"c.ckpt", "c.ckpt.1", "c.ckpt.3", "c.ckpt.next", "c.ckpt.damaged", "c.ckpt.1.damaged",
                           "c.ckpt.01", "c.ckpt.x", "d.ckpt", "c.ckpt.partial-123"})
    touch(in_dir(name), name);
  const CheckpointFiles files = find_checkpoints(base);
  EXPECT_TRUE(files.next);
  EXPECT_EQ(files.ages, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(newest_first(base, files), (std::vector<std::string>{base + ".next", base, base + ".1", base + ".3"}));

  rotate_in_next(base, 2);
  EXPECT_EQ(text_of(in_dir("c.ckpt")), "c.ckpt.next");
  EXPECT_EQ(text_of(in_dir("c.ckpt.1")), "c.ckpt");
  EXPECT_FALSE(paths::exists(in_dir("c.ckpt.3")));
  EXPECT_FALSE(paths::exists(in_dir("c.ckpt.next")));

  remove_checkpoints(base);
  EXPECT_FALSE(paths::exists(in_dir("c.ckpt")));
  EXPECT_FALSE(paths::exists(in_dir("c.ckpt.1")));
  for (const char* kept : {"c.ckpt.damaged", "c.ckpt.1.damaged", "c.ckpt.01", "c.ckpt.x", "d.ckpt"})
    EXPECT_TRUE(paths::exists(in_dir(kept))) << kept;
}

}  // namespace
}  // namespace ft
