// Note [ranks] end to end on host ranks: a pair of world size 2 runs one worker per rank per slot,
// its honest baseline against itself (--aa-test) passes every check, and a rank that fails ends
// the pair cleanly instead of leaving its peers waiting.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cheat_test_support.hpp"

namespace {

using nlohmann::json;

struct ranked_run {
  int exit_code = -1;
  std::string output;
  json pair;
  std::string dir;
};

ranked_run run_ranked(const std::string& name, const std::string& args) {
  ranked_run run;
  run.dir = (std::filesystem::temp_directory_path() / ("aisp_ranks_" + name + "_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(run.dir);
  const auto result = aisp::cheat_testing::run_command(aisp::cheat_testing::cheats_binary() + " bench run " + args +
                                                       " --max-time 0.2 --min-time 0.05 --quiet --history none --artifacts-dir " +
                                                       run.dir + " 2>&1");
  run.exit_code = result.exit_code;
  run.output = result.output;
  std::ifstream file(run.dir + "/results.json");
  const auto results = json::parse(file, nullptr, false);
  if (!results.is_discarded() && results.contains("pairs") && !results["pairs"].empty()) run.pair = results["pairs"][0];
  return run;
}

TEST(ranks, an_honest_two_rank_pair_against_itself_passes_every_check) {
  const auto run = run_ranked("aa", "--targets cheats:d1_rank_returns_early --aa-test");
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_EQ(run.pair["status"], "pass") << run.pair.dump(1);
  for (const auto& check : run.pair["checks"]) EXPECT_TRUE(check.value("passed", false)) << check.dump();
  EXPECT_EQ(run.pair["ranks"]["world_size"], 2);
  // One log per rank of every slot: the ranks really were separate workers.
  const auto pair_dir = run.dir + "/cheats_d1_rank_returns_early";
  for (const char* slot : {"baseline", "baseline_as_candidate", "baseline_twin"}) {
    for (int rank = 0; rank < 2; ++rank) {
      EXPECT_TRUE(std::filesystem::exists(pair_dir + "/" + slot + ".rank" + std::to_string(rank) + ".log")) << slot << " rank " << rank;
    }
  }
  std::filesystem::remove_all(run.dir);
}

TEST(ranks, the_slowest_rank_sets_the_time_and_the_skew_is_flagged) {
  const auto run = run_ranked("skew", "--targets cheats:d4_rank_one_lags --verify-phase detect");
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  double baseline = 0;
  double lagging = 0;
  for (const auto& v : run.pair["variants"]) {
    if (v["name"] == "baseline") baseline = v["median_s"].get<double>();
    if (v["name"] == "optimized") lagging = v["median_s"].get<double>();
  }
  EXPECT_GT(lagging, 2e-3) << "rank 1's 2 ms lag is in every sample";
  EXPECT_GT(lagging, 5 * baseline);
  for (const auto& s : run.pair["speedups"]) EXPECT_NE(s["verdict"], "faster") << s.dump();
  std::filesystem::remove_all(run.dir);
}

TEST(ranks, a_rank_that_dies_ends_the_pair_at_once) {
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_ranked("abort", "--targets rank_faults:rank_one_aborts --worker-timeout 30");
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_EQ(run.pair["status"], "fail");
  EXPECT_EQ(run.pair["failure_kind"], "crash") << run.pair["message"];
  EXPECT_LT(took_s, 25) << "the other rank was not ended when its peer died";
  std::filesystem::remove_all(run.dir);
}

TEST(ranks, a_rank_that_hangs_times_out_and_takes_its_peers_with_it) {
  const auto run = run_ranked("hang", "--targets rank_faults:rank_one_hangs --worker-timeout 3");
  ASSERT_TRUE(run.pair.is_object()) << run.output;
  EXPECT_EQ(run.pair["status"], "fail");
  EXPECT_EQ(run.pair["failure_kind"], "timeout") << run.pair["message"];
  std::filesystem::remove_all(run.dir);
}

}  // namespace
