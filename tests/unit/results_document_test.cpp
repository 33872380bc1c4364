// read_results_document refuses a results.json that is not shaped as aisp writes it, in one line
// that says where (a report, roofline or merge would otherwise fail on a JSON type error, or print
// an empty table and succeed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "results/result_json.hpp"

namespace aisp {
namespace {

std::string written(const std::string& name, const nlohmann::json& document) {
  const auto path = std::filesystem::temp_directory_path() / ("aisp_results_" + std::to_string(getpid()) + "_" + name + ".json");
  std::ofstream(path) << document.dump();
  return path.string();
}

// The message of read_results_document's refusal, or "" when it accepted the document.
std::string refusal(const std::string& name, const nlohmann::json& document) {
  const auto path = written(name, document);
  std::string message;
  try {
    (void)read_results_document(path);
  } catch (const contract_error& error) {
    message = error.what();
  }
  std::filesystem::remove(path);
  return message;
}

nlohmann::json a_run() {
  return {{"schema", results_schema},
          {"schema_version", 1},
          {"pairs", {{{"target", "ch07:copy"},
                      {"status", "pass"},
                      {"variants", {{{"name", "baseline"}}, {{"name", "optimized"}}}},
                      {"speedups", nlohmann::json::array()},
                      {"checks", nlohmann::json::array()}}}}};
}

TEST(results_document, a_document_as_aisp_writes_it_is_read) { EXPECT_EQ(refusal("whole", a_run()), ""); }

TEST(results_document, a_pair_whose_target_is_not_a_string_is_refused_with_where) {
  auto document = a_run();
  document["pairs"][0]["target"] = 5;
  EXPECT_NE(refusal("target", document).find("pairs[0].target is not a string"), std::string::npos);
}

TEST(results_document, lists_that_are_not_lists_and_unnamed_variants_are_refused) {
  auto not_a_list = a_run();
  not_a_list["pairs"][0]["speedups"] = "fast";
  EXPECT_NE(refusal("speedups", not_a_list).find("pairs[0].speedups is not an array"), std::string::npos);
  auto unnamed = a_run();
  unnamed["pairs"][0]["variants"][1].erase("name");
  EXPECT_NE(refusal("unnamed", unnamed).find("pairs[0].variants[1] has no name"), std::string::npos);
}

// A measurement that is text (a hand-edited file, another tool's) would be merged into the history
// as if it were a run, or stop a report on a JSON type error.
TEST(results_document, measurements_that_are_not_numbers_are_refused_with_where) {
  auto with_times = a_run();
  auto& variant = with_times["pairs"][0]["variants"][0];
  variant["median_s"] = 1.5e-3;
  variant["samples_s"] = {1.4e-3, nullptr, 1.6e-3};
  variant["median_ci_s"] = {{"low", 1.4e-3}, {"point", 1.5e-3}, {"high", 1.6e-3}};
  variant["sample_count"] = 3;
  with_times["pairs"][0]["speedups"] = {{{"variant", "optimized"}, {"speedup", {{"low", 1.1}, {"point", 1.2}, {"high", 1.3}}}}};
  EXPECT_EQ(refusal("times", with_times), "");
  for (const auto& [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"median_s", "1.5 ms"}, {"samples_s", {"a", "b"}}, {"sample_count", "3"}, {"median_ci_s", {{"low", "x"}}}}) {
    auto document = with_times;
    document["pairs"][0]["variants"][0][key] = bad;
    EXPECT_NE(refusal(key, document).find("pairs[0].variants[0]." + key + " is not a number"), std::string::npos) << key;
  }
  auto bad_speedup = with_times;
  bad_speedup["pairs"][0]["speedups"][0]["speedup"]["point"] = "fast";
  EXPECT_NE(refusal("speedup", bad_speedup).find("pairs[0].speedups[0].speedup is not a number"), std::string::npos);
}

TEST(results_document, another_schema_is_refused) {
  auto other = a_run();
  other["schema"] = "someone.else";
  EXPECT_NE(refusal("schema", other).find("not \"aisp.bench.run\""), std::string::npos);
}

}  // namespace
}  // namespace aisp
