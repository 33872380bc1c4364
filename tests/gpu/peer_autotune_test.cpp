// Issue 17, "peers at their best": a cuBLASLt variant times the heuristic's top candidates in
// setup, keeps the fastest, and its result in results.json names the winner. Through the real
// binary on ch09:sgemm (a peer) and ch01:gemm_tensor_cores (both variants cuBLASLt), at a size
// that keeps the naive SGEMM baseline short. Skips visibly without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "gpu_guard.hpp"

namespace {

TEST(cublaslt_autotune, every_cublaslt_variant_records_the_algorithm_that_won_and_how) {
  AISP_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_autotune_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const auto run = aisp::testing::run_command("timeout -k 10 540 " + aisp::testing::aisp_binary() +
                                              " bench verify --targets ch09:sgemm,ch01:gemm_tensor_cores"
                                              " --size m=1024,n=1024,k=1024 --quiet --history none --artifacts-dir " +
                                              dir.string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::ifstream file(dir / "results.json");
  const auto results = nlohmann::json::parse(file, nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << run.output;
  // describe() in src/harness/cublaslt_plan.cpp: "algo A tile T ...: rank R of N heuristic
  // candidates (M timed), <time>; rank 1 <time>".
  const std::regex described(R"(^algo -?\d+ tile \d+ stages \d+ cluster \d+ split_k \d+ reduction \d+ swizzle \d+ custom \d+: )"
                             R"(rank (\d+) of (\d+) heuristic candidates \((\d+) timed\), [0-9.]+ (us|ms|s); rank 1 .+$)");
  std::set<std::string> noted;
  for (const auto& pair : results["pairs"]) {
    const auto target = pair.value("target", "");
    SCOPED_TRACE(target);
    EXPECT_EQ(pair.value("status", ""), "pass") << pair.value("message", "");
    for (const auto& v : pair["variants"]) {
      const auto name = v.value("name", "");
      if (v.value("library", "") != "cuBLAS") {
        EXPECT_TRUE(v.value("notes", nlohmann::json::object()).empty()) << name;  // own kernels tune nothing
        continue;
      }
      const auto text = v["notes"].value("cublaslt_algorithm", "");
      std::smatch parts;
      ASSERT_TRUE(std::regex_match(text, parts, described)) << name << ": '" << text << "'";
      const int rank = std::stoi(parts[1]);
      const int offered = std::stoi(parts[2]);
      const int timed = std::stoi(parts[3]);
      // At least the top 8 timed wherever cuBLASLt offers that many (these shapes: all of them run).
      EXPECT_GE(timed, std::min(8, offered)) << text;
      EXPECT_LE(timed, offered) << text;
      EXPECT_GE(rank, 1) << text;
      EXPECT_LE(rank, offered) << text;
      EXPECT_NE(v.value("summary", "").find("autotuned over the top 16 heuristic algorithms"), std::string::npos) << name;
      noted.insert(target + ":" + name);
    }
  }
  EXPECT_TRUE(noted.contains("ch09:sgemm:peer_cublas")) << run.output;
  EXPECT_TRUE(noted.contains("ch01:gemm_tensor_cores:baseline")) << run.output;
  EXPECT_TRUE(noted.contains("ch01:gemm_tensor_cores:optimized")) << run.output;
}

}  // namespace
