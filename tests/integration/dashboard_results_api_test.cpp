// The results API's answers that the dashboard added (src/api/): a run's roofline, a pair's
// stored trace, and a target's expectation bands, on a history made by real host runs (and, for
// the trace, a run recorded into a copy of it with a trace folder, as `bench run --trace` leaves).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "api/results_api.hpp"
#include "history/expectations.hpp"
#include "host_history.hpp"

namespace {

using nlohmann::json;

using dashboard_results_api = aisp::testing::host_history_test;

TEST_F(dashboard_results_api, the_runs_list_names_each_runs_git_commit) {
  auto history = aisp::api::open_history(db());
  const auto sha = aisp::api::show_run(history, 1)["git"].value("sha", "");
  ASSERT_FALSE(sha.empty());
  EXPECT_EQ(aisp::api::list_runs(history, {})[1]["git_sha"], sha);
}

TEST_F(dashboard_results_api, a_runs_roofline_gives_each_variants_achieved_rates_under_its_ceilings) {
  auto history = aisp::api::open_history(db());
  const auto roofline = aisp::api::run_roofline(history, 1);
  ASSERT_EQ(roofline["pairs"].size(), 1u);
  const auto& pair = roofline["pairs"][0];
  EXPECT_EQ(pair["roofline"]["bound"], "memory");  // a transpose does no FLOPs
  const double ceiling = pair["roofline"]["bandwidth_ceiling_bytes_per_s"].get<double>();
  ASSERT_GT(ceiling, 0.0);
  for (const auto& v : pair["variants"]) {
    // SOL % is the achieved bandwidth over the ceiling, as the run judged it.
    EXPECT_NEAR(v["sol_memory_pct"].get<double>(), 100 * v["achieved_bytes_per_s"].get<double>() / ceiling, 1e-6) << v.dump();
  }
  EXPECT_THROW((void)aisp::api::run_roofline(history, 42), aisp::api::api_error);
}

TEST_F(dashboard_results_api, a_pair_names_its_trace_only_when_the_run_stored_one) {
  const auto copy = db_copy("dashboard_trace");
  const auto trace_dir = std::filesystem::path(copy).parent_path() / "dashboard_traces";
  std::filesystem::create_directories(trace_dir);
  aisp::history_store history(copy);
  EXPECT_FALSE(aisp::api::show_pair(history, 1, "labs/host:transpose", false)["trace"].get<bool>());

  auto header = *history.run_header(1);
  header.erase("state");
  header["config"]["trace_dir"] = trace_dir.string();
  header["artifacts_dir"] = trace_dir.string();  // another run, not run 1 again
  const auto run = history.begin_run(header);
  auto pair = aisp::api::show_pair(history, 1, "labs/host:transpose", false);
  history.add_pair(run, pair);
  EXPECT_FALSE(aisp::api::show_pair(history, run, "labs/host:transpose", false)["trace"].get<bool>());  // no file yet

  std::ofstream(trace_dir / "labs_host_transpose.trace.json") << R"({"traceEvents": [], "displayTimeUnit": "ns"})";
  EXPECT_TRUE(aisp::api::show_pair(history, run, "labs/host:transpose", false)["trace"].get<bool>());
  EXPECT_EQ(aisp::api::pair_trace(history, run, "labs/host:transpose")["displayTimeUnit"], "ns");
  EXPECT_THROW((void)aisp::api::pair_trace(history, 1, "labs/host:transpose"), aisp::api::api_error);
}

TEST_F(dashboard_results_api, expectation_bands_widen_the_expected_ci_by_the_tolerance_per_card) {
  const auto dir = std::filesystem::path(db()).parent_path() / "dashboard_expectations";
  std::filesystem::create_directories(dir);
  json expectations = {{"schema", "aisp.expectations"}, {"hardware", "host"}, {"entries", json::object()}};
  expectations["entries"]["labs/host:transpose"]["optimized"] = {{"median_s", 0.002}, {"speedup", {{"point", 4.0}, {"low", 3.0}, {"high", 5.0}}}};
  aisp::save_expectations((dir / "host.json").string(), expectations);

  const auto bands = aisp::api::target_expectations("labs/host:transpose", {"host", "h100", "host"}, dir.string());
  ASSERT_EQ(bands.size(), 1u) << bands.dump();  // no h100.json: no entry for it
  const auto& band = bands["host"]["optimized"]["band"];
  EXPECT_DOUBLE_EQ(band["low"].get<double>(), 3.0 * 0.97);
  EXPECT_DOUBLE_EQ(band["high"].get<double>(), 5.0 * 1.03);
  EXPECT_TRUE(aisp::api::target_expectations("labs/host:strided_sum", {"host"}, dir.string()).empty());
  // A malformed file is refused, saying so (the history route answers without the bands: serve).
  std::ofstream(dir / "h200.json") << "[1, 2";
  try {
    (void)aisp::api::target_expectations("labs/host:transpose", {"h200"}, dir.string());
    ADD_FAILURE() << "a malformed expectations file was read";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("malformed"), std::string::npos) << error.what();
  }
}

}  // namespace
