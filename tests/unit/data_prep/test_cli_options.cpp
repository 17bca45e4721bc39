// Tests of the fusetrain-prep command line: parsing into PrepOptions, --help, every usage error, and
// the installed binary's exit status (0, 1 for bad input, 2 for usage) and "fusetrain-prep: error:" output.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include "data_prep/cli_options.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

CommandLine parse(std::vector<const char*> args) {
  args.insert(args.begin(), "fusetrain-prep");
  return parse_command_line(static_cast<int>(args.size()), args.data());
}

std::string usage_error(std::vector<const char*> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no usage error)";
}

TEST(CliOptions, EveryOptionIsParsed) {
  const CommandLine c =
      parse({"--format", "cifar100", "--input", "/in", "--output", "/out", "--shards", "4", "--grayscale",
             "--resize", "128", "--limit", "500", "--name", "c100", "--label", "coarse"});
  EXPECT_FALSE(c.help);
  EXPECT_EQ(c.options.format, Format::cifar100);
  EXPECT_EQ(c.options.input, "/in");
  EXPECT_EQ(c.options.output, "/out");
  EXPECT_EQ(c.options.shards, 4);
  EXPECT_TRUE(c.options.grayscale);
  EXPECT_EQ(c.options.resize, 128);
  EXPECT_EQ(c.options.limit, 500);
  EXPECT_EQ(c.options.name, "c100");
  EXPECT_EQ(c.options.cifar100_label, Cifar100Label::coarse);
}

TEST(CliOptions, DefaultsAndFormats) {
  const CommandLine c = parse({"--format", "idx", "--input", "in", "--output", "out"});
  EXPECT_EQ(c.options.format, Format::idx);
  EXPECT_EQ(c.options.shards, 1);
  EXPECT_FALSE(c.options.grayscale);
  EXPECT_EQ(c.options.resize, 0);
  EXPECT_EQ(c.options.limit, kNoLimit);
  EXPECT_EQ(c.options.name, "");
  EXPECT_EQ(c.options.cifar100_label, Cifar100Label::fine);
  EXPECT_EQ(format_from_name("cifar10"), Format::cifar10);
  EXPECT_EQ(format_from_name("stl10"), Format::stl10);
  EXPECT_EQ(format_from_name("folder"), Format::folder);
}

TEST(CliOptions, HelpDescribesEveryOptionAndFormat) {
  const CommandLine c = parse({"--help"});
  EXPECT_TRUE(c.help);
  for (const char* word : {"--format", "--input", "--output", "--shards", "--grayscale", "--resize",
                           "--limit", "--name", "--label", "cifar10", "cifar100", "stl10", "idx", "folder",
                           "train-0000k-of-0000N.h5", "Exit status", "Examples"})
    EXPECT_NE(c.help_text.find(word), std::string::npos) << word;
  EXPECT_TRUE(parse({"-h"}).help);
}

TEST(CliOptions, UsageErrorsSayWhatIsWrong) {
  EXPECT_EQ(usage_error({"--format", "jpeg", "--input", "i", "--output", "o"}),
            "unknown --format 'jpeg' (expected cifar10, cifar100, stl10, idx or folder)");
  EXPECT_EQ(usage_error({"--format", "idx", "--output", "o"}), "--input is required");
  EXPECT_EQ(usage_error({"--input", "i", "--output", "o"}), "--format is required");
  EXPECT_EQ(usage_error({"--format", "idx", "--input", "i", "--output", "o", "--shards", "0"}),
            "--shards must be at least 1, not 0");
  EXPECT_EQ(usage_error({"--format", "idx", "--input", "i", "--output", "o", "--limit", "-3"}),
            "--limit must be at least 1, not -3");
  EXPECT_NE(
      usage_error({"--format", "idx", "--input", "i", "--output", "o", "--resize", "big"}).find("resize"),
      std::string::npos);
  EXPECT_NE(usage_error({"--format", "idx", "--input", "i", "--output", "o", "--colour"}).find("colour"),
            std::string::npos);
  EXPECT_EQ(usage_error({"--format", "idx", "--input", "i", "--output", "o", "--label", "coarse"}),
            "--label applies to --format cifar100 only");
  EXPECT_EQ(usage_error({"--format", "cifar100", "--input", "i", "--output", "o", "--label", "medium"}),
            "unknown --label 'medium' (expected fine or coarse)");
  EXPECT_EQ(usage_error({"--format", "idx", "--input", "i", "--output", "o", "--name", ""}),
            "--name must not be empty");
}

// Runs the built fusetrain-prep with `args`; returns its exit status and merged output.
std::pair<int, std::string> run_binary(const std::string& args) {
  const std::string command = ft::test::binary_dir() + "/bin/fusetrain-prep " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) output += buffer;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(CliOptions, BinaryExitStatusAndMessages) {
  if (!fs::exists(fs::path(ft::test::binary_dir()) / "bin" / "fusetrain-prep"))
    GTEST_SKIP() << "fusetrain-prep is not built in " << ft::test::binary_dir()
                 << "/bin (build target fusetrain-prep)";
  const fs::path root = scratch_dir();
  const std::string out = (root / "out").string();

  auto [status, output] = run_binary("--help");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("Usage: fusetrain-prep"), std::string::npos) << output;

  std::tie(status, output) = run_binary("--format jpeg --input " + root.string() + " --output " + out);
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("fusetrain-prep: error: unknown --format 'jpeg'"), std::string::npos) << output;

  std::tie(status, output) = run_binary("--format cifar10 --input " + root.string() + " --output " + out);
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("fusetrain-prep: error: " + (root / "data_batch_1.bin").string() + ": missing"),
            std::string::npos)
      << output;
  EXPECT_TRUE(outputs_in(root / "out").empty());

  Bytes batch(3073, 9);
  batch[0] = 4;
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                           "data_batch_5.bin", "test_batch.bin"})
    write_file(root / "in" / name, batch);
  std::tie(status, output) =
      run_binary("--format cifar10 --input " + (root / "in").string() + " --output " + out + " --grayscale");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("cifar10: train 5 images, test 1 images, shape 32x32x1"), std::string::npos)
      << output;
  EXPECT_NE(output.find("train-00000-of-00001.h5"), std::string::npos) << output;
  EXPECT_EQ(outputs_in(root / "out").size(), 2u);
}

// The summary names the classes, the first ten of them and "..." when there are more: all ten of CIFAR-10 with
// nothing after them, ten of CIFAR-100's twenty coarse classes and then "...".
TEST(CliOptions, SummaryNamesAtMostTenClasses) {
  if (!fs::exists(fs::path(ft::test::binary_dir()) / "bin" / "fusetrain-prep"))
    GTEST_SKIP() << "fusetrain-prep is not built in " << ft::test::binary_dir() << "/bin";
  const fs::path root = scratch_dir();
  std::string listed;
  for (int k = 0; k < 10; ++k) listed += std::string(k ? ", " : "") + "coarse_" + std::to_string(k);

  Bytes cifar10(3073, 9);
  for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                           "data_batch_5.bin", "test_batch.bin"})
    write_file(root / "ten" / name, cifar10);
  auto [status, output] = run_binary("--format cifar10 --input " + (root / "ten").string() + " --output " +
                                     (root / "ten-out").string());
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find(" 10 classes (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck)\n"),
            std::string::npos) << output;

  Bytes cifar100(3074, 9);
  cifar100[0] = 19;  // coarse label
  write_file(root / "twenty" / "train.bin", cifar100);
  write_file(root / "twenty" / "test.bin", cifar100);
  std::tie(status, output) = run_binary("--format cifar100 --label coarse --input " +
                                        (root / "twenty").string() + " --output " + (root / "twenty-out").string());
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find(" 20 classes (" + listed + ", ...)\n"), std::string::npos) << output;
}

}  // namespace
}  // namespace ft::prep
