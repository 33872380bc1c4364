// `aisp triage` through the binary: the bundle holds what its manifest says, the newest run's
// logs go in, and a bad --output is one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../test_support.hpp"

namespace {

using aisp::testing::run_command;
namespace fs = std::filesystem;

TEST(triage, bundles_info_environment_probe_and_the_newest_run) {
  const fs::path dir = fs::temp_directory_path() / "aisp-triage-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "artifacts" / "run-old");
  fs::create_directories(dir / "artifacts" / "run-new");
  std::ofstream(dir / "artifacts" / "run-old" / "results.json") << "{}";
  std::ofstream(dir / "artifacts" / "run-new" / "results.json") << "{\"newest\": true}";
  std::ofstream(dir / "artifacts" / "run-new" / "worker.log") << "a log line\n";
  fs::last_write_time(dir / "artifacts" / "run-old" / "results.json", fs::file_time_type::clock::now() - std::chrono::hours(1));

  const auto run = run_command("cd " + dir.string() + " && " + AISP_BINARY + " triage --output bundle.tar.gz");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("triage bundle: bundle.tar.gz"), std::string::npos) << run.output;
  const auto listing = run_command("tar tzf " + (dir / "bundle.tar.gz").string());
  for (const char* entry : {"./info.json", "./environment.json", "./MANIFEST.txt", "./probe/labs_host_matrix_sum.out",
                            "./logs/results.json", "./logs/worker.log"}) {
    EXPECT_NE(listing.output.find(entry), std::string::npos) << entry << " missing:\n" << listing.output;
  }
  const auto newest = run_command("tar xzf " + (dir / "bundle.tar.gz").string() + " ./logs/results.json -O");
  EXPECT_NE(newest.output.find("newest"), std::string::npos) << newest.output;  // not run-old's
  const auto manifest = run_command("tar xzf " + (dir / "bundle.tar.gz").string() + " ./MANIFEST.txt -O");
  EXPECT_NE(manifest.output.find("labs/host:matrix_sum --validation-sizes-only`, exit status 0"), std::string::npos) << manifest.output;
}

TEST(triage, refuses_an_output_that_is_not_a_tar_gz) {
  const auto run = run_command(std::string(AISP_BINARY) + " triage --skip-probe --output bundle.zip");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--output must name a .tar.gz file"), std::string::npos) << run.output;
}

}  // namespace
