// Note [ranks]: the ranks' answers fold into one worker's answer over rank-major buffers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "runner/rank_merge.hpp"

namespace {

using nlohmann::json;
namespace ranks = aisp::ranks;

json sample_reply(std::vector<double> times, json verified = json::array()) {
  json samples = json::array();
  for (double t : times) samples.push_back({{"t", t}, {"wall", t * 2}, {"mhz", 1980.0}, {"calls", 1}, {"cost", t * 3}});
  return {{"ok", true}, {"samples", samples}, {"verified", verified}, {"minor_faults", 2}, {"access_policy", ""},
          {"library_precision", json::array()}, {"cpu", {{"wall_s", 1.0}, {"other_threads_cpu_s", 0.01}}}};
}

TEST(rank_merge, each_sample_is_the_slowest_ranks_with_every_ranks_time_kept) {
  const auto merged = ranks::merge_sample({sample_reply({1.0, 5.0}), sample_reply({3.0, 2.0})}, {});
  ASSERT_EQ(merged["samples"].size(), 2u);
  EXPECT_DOUBLE_EQ(merged["samples"][0]["t"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(merged["samples"][1]["t"].get<double>(), 5.0);
  EXPECT_EQ(merged["samples"][0]["ranks_t"], json::array({1.0, 3.0}));
  EXPECT_EQ(merged["minor_faults"].get<long long>(), 4);
}

// D7: a stage that waits on its neighbour shows as a rank busy for a small share of the window.
TEST(rank_merge, audited_samples_keep_each_ranks_busy_share_of_the_slowest_window) {
  auto stage0 = sample_reply({4.0});
  stage0["audits"] = json::array({{{"window_s", 4.0}, {"busy_fraction", 0.25}}});
  auto stage1 = sample_reply({2.0});
  stage1["audits"] = json::array({{{"window_s", 2.0}, {"busy_fraction", 1.0}}});
  const auto merged = ranks::merge_sample({stage0, stage1}, {});
  EXPECT_EQ(merged["samples"][0]["ranks_busy"], json::array({0.25, 0.5}));
  EXPECT_FALSE(ranks::merge_sample({sample_reply({1.0}), sample_reply({2.0})}, {})["samples"][0].contains("ranks_busy"));
}

// K6 per rank: each audited sample keeps every rank's kernel launches, not only the slowest's.
TEST(rank_merge, audited_samples_keep_each_ranks_kernel_launches) {
  auto rank0 = sample_reply({4.0, 1.0});
  rank0["audits"] = json::array({{{"kernel_launches", {{"gemm_a", 1}}}}, {{"kernel_launches", {{"gemm_a", 1}}}}});
  auto rank1 = sample_reply({2.0, 3.0});
  rank1["audits"] = json::array({{{"kernel_launches", {{"gemm_b", 1}}}}, {{"kernel_launches", {{"gemm_b", 1}}}}});
  const auto merged = ranks::merge_sample({rank0, rank1}, {});
  EXPECT_EQ(merged["audits"][0]["kernel_launches"], json({{"gemm_a", 1}})) << "the slowest rank's sample";
  EXPECT_EQ(merged["audits"][1]["kernel_launches"], json({{"gemm_b", 1}}));
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(merged["audits"][i]["rank_kernel_launches"], json::array({{{"gemm_a", 1}}, {{"gemm_b", 1}}}));
}

TEST(rank_merge, ranks_that_took_different_sample_counts_are_an_error) {
  EXPECT_THROW(static_cast<void>(ranks::merge_sample({sample_reply({1.0}), sample_reply({1.0, 2.0})}, {})), aisp::contract_error);
}

// Note [verified after the call]: every rank verified the same samples; each one's counts add,
// its listed matches move to the rank's place, and its probes join rank by rank.
TEST(rank_merge, each_verified_fingerprint_covers_every_rank_at_global_indices) {
  const json rank0 = {{"index", 0}, {"input_seed", 9}, {"positions_seed", 5}, {"unwritten", {{"y", 1}}},
                      {"pattern_matches", {{"y", {{4, 1.5}}}}}, {"probe_values", {{"y", {1.0, 2.0}}}}};
  const json rank1 = {{"index", 0}, {"input_seed", 9}, {"positions_seed", 5}, {"unwritten", {{"y", 2}}},
                      {"pattern_matches", {{"y", {{0, nullptr}, {7, 2.0}}}}}, {"probe_values", {{"y", {3.0}}}}};
  json later0 = rank0, later1 = rank1;
  later0["index"] = later1["index"] = 1;
  const auto merged = ranks::merge_sample({sample_reply({1.0, 1.0}, {rank0, later0}), sample_reply({1.0, 1.0}, {rank1, later1})}, {{"y", 10}});
  ASSERT_EQ(merged["verified"].size(), 2u);
  for (const auto& verified : merged["verified"]) {
    EXPECT_EQ(verified["unwritten"]["y"].get<std::size_t>(), 3u);
    const auto& matches = verified["pattern_matches"]["y"];
    ASSERT_EQ(matches.size(), 3u);
    EXPECT_EQ(matches[0][0].get<std::size_t>(), 4u);
    EXPECT_EQ(matches[1][0].get<std::size_t>(), 10u);  // rank 1's element 0
    EXPECT_EQ(matches[2][0].get<std::size_t>(), 17u);
    EXPECT_EQ(verified["probe_values"]["y"], json::array({1.0, 2.0, 3.0}));
  }
}

// Host ranks draw apart: each rank's verified sample stays its own, with its rank.
TEST(rank_merge, ranks_that_verified_different_samples_keep_them_by_rank) {
  const json fingerprint = {{"index", 0}, {"input_seed", 9}, {"unwritten", {{"y", 0}}}, {"pattern_matches", {{"y", {{1, 2.0}}}}},
                            {"probe_values", {{"y", {4.0}}}}};
  json other = fingerprint;
  other["index"] = 1;
  const auto merged = ranks::merge_sample({sample_reply({1.0, 1.0}, {fingerprint}), sample_reply({1.0, 1.0}, {other})}, {{"y", 4}});
  ASSERT_EQ(merged["verified"].size(), 2u);
  EXPECT_EQ(merged["verified"][0]["rank"], 0);
  EXPECT_EQ(merged["verified"][1]["rank"], 1);
  EXPECT_EQ(merged["verified"][1]["index"], 1);
  EXPECT_EQ(merged["verified"][1]["pattern_matches"]["y"][0][0].get<std::size_t>(), 5u);  // rank 1's element 1
  EXPECT_EQ(merged["verified"][1]["probe_values"]["y"], json::array({4.0}));
  const auto one_sided = ranks::merge_sample({sample_reply({1.0}, {fingerprint}), sample_reply({1.0})}, {{"y", 4}});
  ASSERT_EQ(one_sided["verified"].size(), 1u);
  EXPECT_EQ(one_sided["verified"][0]["rank"], 0);
  EXPECT_THROW(static_cast<void>(ranks::merge_sample({sample_reply({1.0}, {fingerprint}), sample_reply({1.0}, {other})}, {{"z", 4}})),
               aisp::contract_error);
}

TEST(rank_merge, a_helper_on_one_rank_is_not_averaged_away) {
  auto busy = sample_reply({1.0});
  busy["cpu"] = {{"wall_s", 1.0}, {"other_threads_cpu_s", 0.9}, {"idle_wall_s", 1.0}, {"idle_cpu_s", 0.0}};
  auto calm = sample_reply({1.0});
  calm["cpu"] = {{"wall_s", 1.0}, {"other_threads_cpu_s", 0.0}, {"idle_wall_s", 1.0}, {"idle_cpu_s", 0.5}};
  const auto merged = ranks::merge_sample({calm, busy}, {});
  EXPECT_DOUBLE_EQ(merged["cpu"]["other_threads_cpu_s"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(merged["cpu"]["idle_cpu_s"].get<double>(), 0.5);
}

// Note [host idle]: a host rank that sleeps through its spans shows, whichever rank's spans are kept.
TEST(rank_merge, a_rank_off_the_cpu_is_not_averaged_away) {
  auto busy = sample_reply({1.0});
  busy["cpu"] = {{"wall_s", 2.0}, {"other_threads_cpu_s", 0.1}, {"process_cpu_s", 2.0}};
  auto sleeping = sample_reply({1.0});
  sleeping["cpu"] = {{"wall_s", 1.0}, {"other_threads_cpu_s", 0.0}, {"process_cpu_s", 0.1}};
  const auto merged = ranks::merge_sample({sleeping, busy}, {});
  EXPECT_DOUBLE_EQ(merged["cpu"]["wall_s"].get<double>(), 2.0);        // the busier helper's rank
  EXPECT_DOUBLE_EQ(merged["cpu"]["process_cpu_s"].get<double>(), 0.2);  // at the sleeping rank's 10%
}

TEST(rank_merge, values_concatenate_rank_after_rank) {
  const auto merged = ranks::concatenate_values({{{"y", {1, 2}}}, {{"y", {3, 4}}}});
  EXPECT_EQ(merged["y"], json::array({1, 2, 3, 4}));
}

TEST(rank_merge, truth_indices_split_by_rank_and_come_back_in_the_order_asked) {
  const auto split = ranks::split_extra_indices({{"y", {11, 2, 10}}}, {{"y", 10}}, 2);
  EXPECT_EQ(split.per_rank[0]["y"], json::array({2}));
  EXPECT_EQ(split.per_rank[1]["y"], json::array({1, 0}));
  const auto joined = ranks::join_extra_values({{{"y", {20.0}}}, {{"y", {111.0, 110.0}}}}, split.order);
  EXPECT_EQ(joined["y"], json::array({111.0, 20.0, 110.0}));
  EXPECT_THROW(static_cast<void>(ranks::split_extra_indices({{"y", {20}}}, {{"y", 10}}, 2)), aisp::contract_error);
}

TEST(rank_merge, a_load_reports_what_any_ranks_setup_did) {
  json a = {{"ok", true}, {"load", {{"setup_s", 0.1}, {"calls_per_sample", 1}, {"setup_wrote_outputs", 0}, {"buffer_bytes", 8},
                                     {"setup_mutated_inputs", json::array()}, {"library_precision", json::array()}, {"access_policy", ""}}}};
  json b = a;
  b["load"]["setup_s"] = 0.3;
  b["load"]["setup_wrote_outputs"] = 5;
  b["load"]["setup_mutated_inputs"] = {"x"};
  const auto merged = ranks::merge_load({a, b});
  EXPECT_DOUBLE_EQ(merged["load"]["setup_s"].get<double>(), 0.3);
  EXPECT_EQ(merged["load"]["setup_wrote_outputs"].get<std::size_t>(), 5u);
  EXPECT_EQ(merged["load"]["buffer_bytes"].get<std::size_t>(), 16u);
  EXPECT_EQ(merged["load"]["setup_mutated_inputs"], json::array({"x"}));
}

TEST(rank_merge, a_call_report_carries_the_worst_ranks_probes) {
  const json before = {{"threads", 3}, {"allocations", 10}, {"c_allocations", 0}, {"mappings", 0}, {"environment_hash", 7},
                       {"priority", 0}, {"stdout_bytes", 0}, {"minor_faults", 0}, {"scheduler", 0}, {"affinity_hash", 1}};
  json quiet = {{"ok", true}, {"mutated_inputs", json::array()}, {"subnormal_inputs", 0}, {"launch_error", ""},
                {"late_outputs", json::array()}, {"helper_cpu_after_return_s", 0.0}, {"allocation_caller", ""},
                {"initial_scheduler", 0}, {"initial_affinity_hash", 1}, {"before", before}, {"after", before}};
  json noisy = quiet;
  noisy["after"]["threads"] = 5;
  noisy["after"]["environment_hash"] = 8;
  noisy["launch_error"] = "cudaErrorInvalidConfiguration";
  const auto merged = ranks::merge_call_report({quiet, noisy});
  EXPECT_EQ(merged["after"]["threads"].get<long long>() - merged["before"]["threads"].get<long long>(), 2);
  EXPECT_NE(merged["after"]["environment_hash"], merged["before"]["environment_hash"]);
  EXPECT_EQ(merged["launch_error"], "cudaErrorInvalidConfiguration");
}

TEST(rank_merge, traffic_sums_ranks_and_any_unavailable_rank_makes_it_unavailable) {
  const json a = {{"ok", true}, {"calls", 1}, {"passes", 1}, {"l2_read_bytes", 1.0}, {"l2_write_bytes", 2.0},
                  {"dram_read_bytes", 3.0}, {"dram_write_bytes", 4.0}};
  EXPECT_DOUBLE_EQ(ranks::merge_traffic({a, a})["dram_read_bytes"].get<double>(), 6.0);
  EXPECT_TRUE(ranks::merge_traffic({a, {{"ok", true}, {"unavailable", "profiler busy"}}}).contains("unavailable"));
}

TEST(rank_merge, init_reports_the_worst_ranks_audit) {
  const auto merged = ranks::merge_init({{{"ok", true}, {"audit", "on"}}, {{"ok", true}, {"audit", "unavailable: no CUPTI"}}});
  EXPECT_EQ(merged["audit"], "unavailable: no CUPTI");
  EXPECT_EQ(merged["ranks"], 2);
}

}  // namespace
