// The results API (src/api/) on a history made by real host runs: filters, a run's and a pair's
// answers, comparisons, a target's history, the validity rows, and one-line errors for what is
// not there. The runs come through the aisp binary; the questions go to the library directly.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "api/results_api.hpp"
#include "host_history.hpp"

namespace {

using aisp::api::api_error;
using nlohmann::json;

using results_api = aisp::testing::host_history_test;

// list_runs with a filter that `set` fills in (designated initializers would leave fields to -Wextra).
template <typename Set>
json runs_where(aisp::history_store& history, Set set) {
  aisp::api::run_filter filter;
  set(filter);
  return aisp::api::list_runs(history, filter);
}

// The message of the api_error that `ask` throws ("" when it throws none).
template <typename Question>
std::string api_error_of(Question ask) {
  try {
    ask();
  } catch (const api_error& error) {
    return error.what();
  }
  return "";
}

TEST_F(results_api, list_runs_gives_the_runs_newest_first_and_filters_them) {
  auto history = aisp::api::open_history(db());
  const auto all = aisp::api::list_runs(history, {});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["id"], 2);
  EXPECT_EQ(all[1]["id"], 1);
  EXPECT_EQ(all[0]["hardware"], "host");
  EXPECT_EQ(all[0]["pairs"], 1);

  const auto one = runs_where(history, [&](auto& f) { f.target = "labs/host:transpose"; });
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0]["status"], "pass");
  EXPECT_FALSE(one[0]["speedups"].empty());
  EXPECT_FALSE(one[0].contains("result"));

  EXPECT_TRUE(runs_where(history, [&](auto& f) { f.target = "labs/host:no_such_pair"; }).empty());
  EXPECT_EQ(runs_where(history, [&](auto& f) { f.gpu = "HOST"; }).size(), 2u);  // the hardware key, any case
  EXPECT_TRUE(runs_where(history, [&](auto& f) { f.gpu = "h100"; }).empty());
  EXPECT_EQ(runs_where(history, [&](auto& f) { f.limit = 1; }).size(), 1u);

  const std::string first_day = all[1]["started_at"].get<std::string>().substr(0, 10);  // YYYY-MM-DD
  const std::string last_day = all[0]["started_at"].get<std::string>().substr(0, 10);
  EXPECT_EQ(runs_where(history, [&](auto& f) { f.since = first_day; f.until = last_day; }).size(), 2u);  // whole days included
  EXPECT_TRUE(runs_where(history, [&](auto& f) { f.since = "9999"; }).empty());
  EXPECT_TRUE(runs_where(history, [&](auto& f) { f.until = "1999-12-31"; }).empty());
  EXPECT_NE(api_error_of([&] { (void)runs_where(history, [&](auto& f) { f.limit = 0; }); }).find("limit"), std::string::npos);
}

TEST_F(results_api, show_run_gives_each_pairs_verdicts_cis_sol_and_failed_checks) {
  auto history = aisp::api::open_history(db());
  const auto run = aisp::api::show_run(history, 1);
  EXPECT_EQ(run["id"], 1);
  EXPECT_EQ(run["state"], "complete");
  EXPECT_EQ(run["hardware"], "host");
  EXPECT_NE(run["command"].get<std::string>().find("bench run"), std::string::npos);
  ASSERT_EQ(run["pairs"].size(), 1u);
  const auto& pair = run["pairs"][0];
  EXPECT_EQ(pair["target"], "labs/host:transpose");
  EXPECT_EQ(pair["status"], "pass");
  ASSERT_FALSE(pair["speedups"].empty());
  const auto& ci = pair["speedups"][0]["speedup"];
  EXPECT_LE(ci["low"].get<double>(), ci["point"].get<double>());
  EXPECT_LE(ci["point"].get<double>(), ci["high"].get<double>());
  std::set<std::string> variants;
  for (const auto& v : pair["variants"]) {
    variants.insert(v["name"].get<std::string>());
    EXPECT_GT(v["median_s"].get<double>(), 0) << v.dump();
    EXPECT_TRUE(v.contains("sol_memory_pct")) << v.dump();
  }
  EXPECT_TRUE(variants.count("baseline") && variants.count("optimized")) << pair["variants"].dump();
  EXPECT_GT(pair["checks_run"].get<int>(), 0);
  EXPECT_TRUE(pair["failed_checks"].empty()) << pair["failed_checks"].dump();  // an honest pair passes them all
}

TEST_F(results_api, show_pair_summarizes_each_variants_stored_samples) {
  auto history = aisp::api::open_history(db());
  const auto pair = aisp::api::show_pair(history, 2, "labs/host:transpose", false);
  EXPECT_EQ(pair["run"], 2);
  EXPECT_FALSE(pair["checks"].empty());
  for (const auto& v : pair["variants"]) {
    const auto& stored = v["stored_samples"];
    EXPECT_EQ(stored["count"], v["sample_count"]) << v["name"];
    EXPECT_LE(stored["min_s"].get<double>(), stored["median_s"].get<double>());
    EXPECT_LE(stored["median_s"].get<double>(), stored["max_s"].get<double>());
    EXPECT_DOUBLE_EQ(stored["median_s"].get<double>(), v["median_s"].get<double>());  // the samples the run summarized
    EXPECT_FALSE(v.contains("samples_s"));
    EXPECT_TRUE(v.contains("device_audit"));
  }
  const auto with_samples = aisp::api::show_pair(history, 2, "labs/host:transpose", true);
  for (const auto& v : with_samples["variants"]) EXPECT_EQ(v["samples_s"].size(), v["sample_count"].get<std::size_t>());
}

TEST_F(results_api, compare_and_target_history_answer_as_the_cli_does) {
  auto history = aisp::api::open_history(db());
  const auto comparison = aisp::api::compare(history, 1, 2);
  EXPECT_EQ(comparison["changes"].size(), 2u);  // baseline and optimized of one pair
  EXPECT_TRUE(comparison["warnings"].empty()) << comparison["warnings"].dump();

  const auto across = aisp::api::target_history(history, "labs/host:transpose", 50);
  ASSERT_EQ(across["runs"].size(), 2u);
  EXPECT_EQ(across["runs"][0]["run"], 2);
  EXPECT_EQ(across["runs"][0]["status"], "pass");
  EXPECT_GT(across["runs"][0]["median_s"]["baseline"].get<double>(), 0);
  for (const auto& s : across["runs"][1]["speedups"]) EXPECT_FALSE(s["regressed"].get<bool>()) << s.dump();
  EXPECT_EQ(aisp::api::target_history(history, "labs/host:transpose", 1)["runs"].size(), 1u);
}

TEST_F(results_api, questions_about_what_is_not_there_are_one_line_errors) {
  auto history = aisp::api::open_history(db());
  EXPECT_NE(api_error_of([&] { (void)aisp::api::show_run(history, 99); }).find("unknown run id 99"), std::string::npos);
  EXPECT_NE(api_error_of([&] { (void)aisp::api::compare(history, 1, 99); }).find("unknown run id 99"), std::string::npos);
  const auto no_pair = api_error_of([&] { (void)aisp::api::show_pair(history, 1, "ch07:transpose", false); });
  EXPECT_NE(no_pair.find("it has: labs/host:transpose"), std::string::npos) << no_pair;
  EXPECT_NE(api_error_of([&] { (void)aisp::api::target_history(history, "ch99:nothing", 5); }).find("no recorded run"),
            std::string::npos);
  EXPECT_NE(api_error_of([] { (void)aisp::api::validity_rows("no-such-check"); }).find("no validity row"), std::string::npos);
  EXPECT_NE(api_error_of([] { (void)aisp::api::list_targets("ch99"); }).find("no targets"), std::string::npos);
}

TEST_F(results_api, a_missing_database_is_refused_and_not_created) {
  const auto missing = aisp::testing::two_host_runs().dir + "/absent.db";
  EXPECT_NE(api_error_of([&] { (void)aisp::api::open_history(missing); }).find("no history database"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(results_api_catalogue, validity_rows_finds_a_code_in_any_case_and_a_check_by_name) {
  const auto by_code = aisp::api::validity_rows("t4");
  ASSERT_EQ(by_code.size(), 1u);
  EXPECT_EQ(by_code[0]["code"], "T4");
  EXPECT_EQ(by_code[0]["issue"], "timer granularity");
  const auto by_name = aisp::api::validity_rows("outliers");
  ASSERT_FALSE(by_name.empty());
  EXPECT_EQ(by_name[0]["code"], "S2");
  EXPECT_EQ(by_name[0]["query"], "outliers");
}

}  // namespace
