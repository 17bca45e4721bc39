// A finished run's event file (`fusetrain report --tensorboard`) when the disk refuses it: the report fails
// naming the file instead of returning a path to a file that lost what was buffered.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "file_size_limit.h"
#include "io/paths.h"
#include "monitor/event_file.h"
#include "monitor/results_events.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

TEST(ResultsEvents, AWriteTheDiskRefusesIsAnErrorNamingTheFile) {
  const std::string folder = ft::test::temp_dir() + "/results_events_" + std::to_string(getpid());
  paths::remove_all(folder);
  RunRecord run;
  run.provenance.started_at = "2026-11-26T06:33:07Z";
  run.config_yaml = std::string(1500, '#') + "\n";  // past the limit, within one stdio buffer
  std::string message;
  {
    const test::FileSizeLimit limit(512);
    try {
      write_run_events(run, folder);
    } catch (const Error& e) {
      message = e.what();
    }
  }
  const auto files = event_files_in(folder);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(message.find("TensorBoard event file " + files.front() + " cannot be written"), std::string::npos)
      << "message: " << message;
  paths::remove_all(folder);
}

}  // namespace
}  // namespace ft
