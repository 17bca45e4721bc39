// The typed gather of per-rank records: every field of the table survives the trip, strings with
// tabs and newlines included (the old text encoding split on them); bytes laid out otherwise are named.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "error_of.h"
#include "results/rank_gather.h"
#include "results/results_fields.h"
#include "test_world.h"

namespace ft {
namespace {

TEST(RankGather, EveryFieldTravels) {
  World& world = test::world();
  RankRecord mine;
  mine.hostname = "host\twith tab";
  mine.device = "GPU\nname";
  mine.local_rank = 3;
  for (std::size_t k = 0; k < kRankPhases; ++k) mine.phase_s[k] = 0.1 * static_cast<double>(k + 1) + world.rank();
  mine.peak_memory_bytes = (std::int64_t{1} << 40) + world.rank();
  mine.train_images = 25000;
  mine.allreduce_bytes = 123456789012;
  mine.allreduce_s = 1.0 / 3.0;
  mine.train_loss = 0.6931471805599453;
  mine.train_acc = 0.875;
  mine.test_images = 5000 + world.rank();
  mine.test_loss = 1.0 / 7.0;
  mine.test_acc = 0.8125;
  const auto all = gather_rank_records(world, mine);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  const auto& back = all[static_cast<std::size_t>(world.rank())];
  EXPECT_EQ(back.hostname, mine.hostname);
  EXPECT_EQ(back.device, mine.device);
  EXPECT_EQ(back.local_rank, 3);
  for (std::size_t k = 0; k < kRankPhases; ++k) EXPECT_EQ(back.phase_s[k], mine.phase_s[k]) << k;
  EXPECT_EQ(back.peak_memory_bytes, mine.peak_memory_bytes);
  EXPECT_EQ(back.train_images, 25000);
  EXPECT_EQ(back.allreduce_bytes, mine.allreduce_bytes);
  EXPECT_EQ(back.allreduce_s, mine.allreduce_s);  // bit-exact, not printed and parsed
  EXPECT_EQ(back.train_loss, mine.train_loss);
  EXPECT_EQ(back.train_acc, 0.875);
  EXPECT_EQ(back.test_images, 5000 + world.rank());
  EXPECT_EQ(back.test_loss, 1.0 / 7.0);
  EXPECT_EQ(back.test_acc, 0.8125);
}

// Bytes from a rank whose records are laid out otherwise: ending inside a field (a length, a string, the last
// number, by one byte) or giving a negative length is refused naming the rank and the field, never read past.
TEST(RankGather, ARecordThatEndsInsideAFieldIsNamed) {
  RankRecord mine;
  mine.hostname = "node1";
  const std::string bytes = pack_rank_records({mine, mine});
  const auto back = unpack_rank_records(bytes, 2);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].hostname, "node1");
  EXPECT_TRUE(unpack_rank_records("", 2).empty());
  const auto error = [](const std::string& b) { return test::error_of([&] { unpack_rank_records(b, 2); }); };
  const std::string last = rank_fields().fields.back().name;
  const std::string one_short = error(bytes.substr(0, bytes.size() - 1));
  EXPECT_NE(one_short.find("rank 2's record ends inside field " + last), std::string::npos) << one_short;
  EXPECT_NE(error(bytes.substr(0, 4)).find("rank 2's record ends inside field hostname"), std::string::npos);
  EXPECT_NE(error(bytes.substr(0, 8 + 4)).find("rank 2's record ends inside field hostname"), std::string::npos);
  EXPECT_NE(error(bytes.substr(0, bytes.size() / 2 + 3)).find("rank 2's record ends inside field"), std::string::npos);
  std::string negative = bytes;
  const std::int64_t minus_one = -1;
  std::memcpy(negative.data(), &minus_one, sizeof minus_one);
  EXPECT_NE(error(negative).find("rank 2 sent a negative length for field hostname"), std::string::npos)
      << error(negative);
}

TEST(RankGather, RankEpochRowsOfEveryRankInRankOrder) {
  World& world = test::world();
  const std::vector<RankEpochRecord> mine = {{world.rank(), 2, 0.5, 0.75, 1.0 / 3.0, 0.625 + world.rank()}};
  const auto all = gather_rank_epochs(world, mine);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_EQ(all[static_cast<std::size_t>(r)].rank, r);
    EXPECT_EQ(all[static_cast<std::size_t>(r)].epoch, 2);
    EXPECT_EQ(all[static_cast<std::size_t>(r)].test_acc, 0.625 + r);
  }
  EXPECT_EQ(all.back().test_loss, 1.0 / 3.0);
}

TEST(RankGather, UtilizationSamplesOfEveryRankInRankOrder) {
  World& world = test::world();
  std::vector<UtilizationSample> mine;
  for (int i = 0; i < 3; ++i) mine.push_back({0.5 * i, world.rank(), 10.0 + i, 5.0});
  const auto all = gather_utilization(world, mine);
  ASSERT_EQ(all.size(), 3u * static_cast<std::size_t>(world.size()));
  EXPECT_EQ(all.front().rank, 0);
  EXPECT_EQ(all[2].gpu_percent, 12.0);
  EXPECT_EQ(all[2].time_s, 1.0);
  const auto none = gather_utilization(world, {});
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace ft
