// The cold flush evicts (docs/proposals/clean-l2-flush.md): a pair whose 32 MiB fit in L2 runs
// at least 1.25x slower per call in cold mode, with either flush, than in hot mode, where it
// runs from L2. A flush that left the data in L2 (or inputs written after it) would make the
// cold samples as fast as the hot ones.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../cheats/cheat_test_support.hpp"
#include "gpu_guard.hpp"

namespace {

// The baseline's median seconds per call of flush_gpu:l2_resident_affine under these options.
double baseline_median_s(const std::string& options) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_flush_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto ran = aisp::cheat_testing::run_command(
      "timeout -k 10 300 " + aisp::cheat_testing::cheats_binary() + " bench run --targets flush_gpu:l2_resident_affine " + options +
      " --max-time 0.5 --quiet --history none --artifacts-dir " + dir.string() + " 2>&1");
  std::ifstream file(dir / "results.json");
  const auto results = file ? nlohmann::json::parse(file, nullptr, false) : nlohmann::json();
  std::filesystem::remove_all(dir);
  if (!results.is_object() || !results.contains("pairs") || results["pairs"].empty()) {
    ADD_FAILURE() << options << ": no results\n" << ran.output;
    return 0;
  }
  for (const auto& v : results["pairs"][0]["variants"])
    if (v.value("name", "") == "baseline") return v.value("median_s", 0.0);
  ADD_FAILURE() << options << ": no baseline\n" << ran.output;
  return 0;
}

TEST(cold_flush, either_flush_evicts_a_working_set_that_fits_in_l2) {
  AISP_REQUIRE_GPU();
  const double hot = baseline_median_s("--mode hot");
  const double cold_write = baseline_median_s("--mode cold --l2-flush write");
  const double cold_read = baseline_median_s("--mode cold --l2-flush read");
  ASSERT_GT(hot, 0);
  EXPECT_GT(cold_write, 1.25 * hot) << "write flush: cold " << cold_write * 1e6 << " us, hot " << hot * 1e6 << " us";
  EXPECT_GT(cold_read, 1.25 * hot) << "read flush: cold " << cold_read * 1e6 << " us, hot " << hot * 1e6 << " us";
  std::printf("[flush] per call: hot %.2f us, cold with write flush %.2f us, cold with read flush %.2f us\n", hot * 1e6,
              cold_write * 1e6, cold_read * 1e6);
}

}  // namespace
