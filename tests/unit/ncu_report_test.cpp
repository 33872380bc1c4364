// Nsight Compute details, read back from real outputs captured on the H100 (2026-11-27,
// scripts/profile_pair.sh, tests/unit/data/ncu/), and the bottleneck classes drawn from them.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "aisp/check.hpp"
#include "profile/bottleneck.hpp"
#include "profile/ncu_report.hpp"
#include "profile/profile_diff.hpp"

namespace aisp::profile {
namespace {

std::string captured(const std::string& name) {
  std::ifstream in(std::string(AISP_NCU_DATA_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

kernel_metrics only_kernel(const std::string& file) {
  const auto kernels = parse_ncu_details(captured(file));
  EXPECT_EQ(kernels.size(), 1u) << file;
  return key_metrics(kernels.at(0));
}

TEST(ncu_report, reads_one_launch_with_its_units_normalized) {
  const auto kernels = parse_ncu_details(captured("fir_unrolled.csv"));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_NE(kernels[0].name.find("fir_unrolled_kernel<32>"), std::string::npos);
  EXPECT_EQ(kernels[0].grid, "(65536, 1, 1)");
  EXPECT_NE(kernels[0].nvtx.find("aisp_benchmark_size"), std::string::npos);  // the benchmark size's range
  const auto m = key_metrics(kernels[0]);
  ASSERT_TRUE(m.duration_s);
  EXPECT_NEAR(*m.duration_s, 193056e-9, 1e-12);  // "193,056" ns
  EXPECT_DOUBLE_EQ(m.dram_pct.value(), 80.37);
  EXPECT_DOUBLE_EQ(m.issue_busy_pct.value(), 65.51);
  EXPECT_DOUBLE_EQ(m.registers_per_thread.value(), 48);
  EXPECT_DOUBLE_EQ(m.theoretical_occupancy_pct.value(), 62.5);
  EXPECT_EQ(m.occupancy_limiter, "registers");  // 5 blocks by registers, 8 by warps, 32 by shared memory
  EXPECT_EQ(*kernels[0].number("SM Frequency"), 1916315732.22);  // thousands separators dropped
}

TEST(ncu_report, names_the_shared_memory_limit_of_the_tma_ring) {
  const auto m = only_kernel("stencil5x5_tma_ring.csv");
  EXPECT_DOUBLE_EQ(m.theoretical_occupancy_pct.value(), 25);
  EXPECT_EQ(m.occupancy_limiter, "registers");  // registers and shared memory both allow 2 blocks: the first named
  const auto json = to_json(m);
  EXPECT_EQ(json["registers_per_thread"], 96);
  EXPECT_TRUE(json.contains("duration_s"));
}

TEST(ncu_report, refuses_text_without_a_details_table) {
  EXPECT_THROW((void)parse_ncu_details("==PROF== Connected to process 1\nno table here\n"), contract_error);
  EXPECT_THROW((void)parse_ncu_details(""), contract_error);
}

TEST(bottleneck, streaming_kernels_are_memory_bound_on_dram) {
  for (const char* file : {"copy_float4.csv", "fir_unrolled.csv", "stencil5x5_tma_ring.csv", "sort_network.csv"}) {
    const auto verdict = classify(only_kernel(file));
    EXPECT_EQ(verdict.kind, bottleneck::memory_bound) << file;
    EXPECT_NE(verdict.detail.find("DRAM"), std::string::npos) << file << ": " << verdict.detail;
    EXPECT_FALSE(verdict.evidence.empty());
    EXPECT_FALSE(verdict.remedies.empty());
  }
}

TEST(bottleneck, names_dram_when_l2_only_carries_its_stream) {
  // ch08:occupancy_tuning's 3x3 tiles on the H100: L2 87.6%, DRAM 82.5% (saturated too), 60.5% L2
  // hits: the halo re-reads are not what bounds it, DRAM's bytes are.
  const auto verdict = classify(only_kernel("stencil3x3_tile.csv"));
  EXPECT_EQ(verdict.kind, bottleneck::memory_bound);
  EXPECT_EQ(verdict.detail, "DRAM 82.5% of peak (L2 87.6% carries its stream: 60.5% L2 hits)");
}

TEST(bottleneck, names_l2_when_its_hits_are_the_traffic) {
  // ch07:coalesced_copy's baseline on the H200: L2 91.7%, DRAM 11.4%, 92.6% L2 hits (a sector
  // re-read by 8 lanes' requests).
  kernel_metrics m;
  m.duration_s = 400e-6;
  m.sm_pct = 6.1;
  m.dram_pct = 11.4;
  m.l2_pct = 91.7;
  m.l1_pct = 57.1;
  m.l2_hit_pct = 92.6;
  EXPECT_EQ(classify(m).detail, "L2 91.7% of peak");
  m.l2_hit_pct = 50;  // few hits, but DRAM far below L2: still L2's own traffic
  EXPECT_EQ(classify(m).detail, "L2 91.7% of peak");
  EXPECT_EQ(busiest_memory_level(m).name, "L2");
}

TEST(bottleneck, the_run_time_tap_loop_is_bound_by_l1_not_dram) {
  // ch08:loop_unrolling's baseline reloads x from L1 for every tap: L1 80%, DRAM 31%.
  const auto verdict = classify(only_kernel("fir_runtime_loop.csv"));
  EXPECT_EQ(verdict.kind, bottleneck::memory_bound);
  EXPECT_NE(verdict.detail.find("L1/TEX"), std::string::npos) << verdict.detail;
  EXPECT_NE(verdict.remedies.at(0).find("ch08:loop_unrolling"), std::string::npos);
}

TEST(bottleneck, each_class_has_its_rule) {
  kernel_metrics m;
  m.duration_s = 200e-6;
  m.dram_pct = 20;
  m.l2_pct = 25;
  m.l1_pct = 30;
  m.sm_pct = 85;
  EXPECT_EQ(classify(m).kind, bottleneck::compute_bound);
  m.sm_pct = 40;
  m.eligible_warps_per_scheduler = 0.6;
  m.theoretical_occupancy_pct = 25;
  m.occupancy_limiter = "shared memory";
  const auto limited = classify(m);
  EXPECT_EQ(limited.kind, bottleneck::occupancy_limited);
  EXPECT_NE(limited.detail.find("shared memory"), std::string::npos);
  m.theoretical_occupancy_pct = 100;
  EXPECT_EQ(classify(m).kind, bottleneck::latency_bound);
  m.duration_s = 3e-6;
  EXPECT_EQ(classify(m).kind, bottleneck::launch_bound);
  EXPECT_EQ(classify(kernel_metrics{}).kind, bottleneck::unknown);
  EXPECT_EQ(to_json(classify(m))["class"], "launch-bound");
}

TEST(ncu_report, reads_the_raw_page_for_stall_reasons) {
  // A real `--page raw` capture (the FIR's validation-size launches): a units row, then a launch a row.
  const auto launches = parse_ncu_raw(captured("raw_page_fir_small_sizes.csv"));
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].id, "0");
  EXPECT_NE(launches[0].name.find("fir_unrolled_kernel<8, 4>"), std::string::npos);
  EXPECT_DOUBLE_EQ(launches[0].values.at("launch__registers_per_thread"), 24);
  kernel_metrics m;
  add_raw_metrics(m, launches[0]);
  ASSERT_FALSE(m.top_stalls.empty());
  EXPECT_LE(m.top_stalls.size(), 3u);
  for (std::size_t i = 1; i < m.top_stalls.size(); ++i) EXPECT_GE(m.top_stalls[i - 1].second, m.top_stalls[i].second);
  for (const auto& [reason, value] : m.top_stalls) EXPECT_NE(reason, "selected");  // the issuing warp is no stall
  EXPECT_FALSE(m.global_load_sectors_per_request.has_value());  // not asked for in that capture
  EXPECT_TRUE(to_json(m).contains("top_stalls"));
}

TEST(ncu_report, sectors_per_request_and_bank_conflicts_from_raw_counters) {
  ncu_raw_launch raw;
  raw.values["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 4000;
  raw.values["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 1000;
  raw.values["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] = 7;
  raw.values["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"] = 2.5;
  raw.values["smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"] = 1;
  kernel_metrics m;
  add_raw_metrics(m, raw);
  EXPECT_DOUBLE_EQ(m.global_load_sectors_per_request.value(), 4);
  EXPECT_FALSE(m.global_store_sectors_per_request.has_value());
  EXPECT_DOUBLE_EQ(m.shared_bank_conflicts.value(), 7);
  ASSERT_EQ(m.top_stalls.size(), 1u);
  EXPECT_EQ(m.top_stalls[0].first, "long_scoreboard");
  m.sm_pct = 30;
  m.dram_pct = 20;
  m.duration_s = 1e-3;
  m.global_load_sectors_per_request = 16;  // a strided load: half of every sector wasted or worse
  const auto verdict = classify(m);
  const auto has = [&](const char* text) {
    for (const auto& line : verdict.evidence) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("top stall: long_scoreboard"));
  EXPECT_TRUE(has("16.0 sectors per global load request"));
  EXPECT_TRUE(has("7 shared-memory bank conflicts"));
  for (const auto& name : raw_metric_names()) EXPECT_NE(name.find("__"), std::string::npos) << name;
}

TEST(profile_diff, explains_the_fir_speedup_by_instructions_and_the_l1_load) {
  // ch08:loop_unrolling, baseline (run-time tap loop) against optimized (register window).
  const auto baseline = only_kernel("fir_runtime_loop.csv");
  const auto optimized = only_kernel("fir_unrolled.csv");
  const auto diff = compare_profiles(baseline, optimized);
  EXPECT_NEAR(diff.speedup, 509504.0 / 193056.0, 1e-9);
  ASSERT_GE(diff.explanations.size(), 3u);
  EXPECT_NE(diff.explanations[0].find("memory-bound (L1/TEX"), std::string::npos) << diff.explanations[0];
  EXPECT_NE(diff.explanations[0].find("memory-bound (DRAM"), std::string::npos) << diff.explanations[0];
  EXPECT_NE(diff.explanations[1].find("fewer instructions"), std::string::npos) << diff.explanations[1];
  bool dram = false;
  for (const auto& line : diff.explanations) dram = dram || line.find("moved from L1/TEX") != std::string::npos;
  EXPECT_TRUE(dram);
  EXPECT_EQ(to_json(diff)["changes"][0]["metric"], "duration_s");
}

TEST(profile_diff, reads_back_what_profile_json_holds) {
  const auto m = only_kernel("stencil5x5_tma_ring.csv");
  const auto back = metrics_from_json(to_json(m));
  EXPECT_EQ(back.name, m.name);
  EXPECT_EQ(back.duration_s, m.duration_s);
  EXPECT_EQ(back.dram_pct, m.dram_pct);
  EXPECT_EQ(back.elapsed_cycles, m.elapsed_cycles);
  EXPECT_EQ(back.occupancy_limiter, m.occupancy_limiter);
  EXPECT_THROW((void)compare_profiles(kernel_metrics{}, m), contract_error);
}

}  // namespace
}  // namespace aisp::profile
