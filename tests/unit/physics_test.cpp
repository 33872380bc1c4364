// SOL %, the roofline bound and the physics gate on synthetic results, the ceilings' sources,
// and the roofline SVG.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "aisp/check.hpp"
#include "hw/ceilings.hpp"
#include "hw/datasheet.hpp"
#include "hw/hw_suite.hpp"
#include "results/result_json.hpp"
#include "results/roofline_svg.hpp"
#include "runner/physics_checks.hpp"

namespace aisp {
namespace {

ceiling_set h100_like() {
  ceiling_set c;
  c.source = "measured";
  c.memory_bytes_per_s = 3e12;
  c.fp32_flops_per_s = 60e12;
  return c;
}

TEST(physics_gate, gives_the_memory_sol_the_ends_of_the_median_ci_imply_and_results_json_carries_it) {
  variant_result measured;
  measured.name = "optimized";
  measured.stats.median = 100e-6;
  measured.median_ci = {.low = 98e-6, .high = 104e-6};
  measured.achieved_bytes_per_s = 2.55e12;  // 85% of the 3 TB/s ceiling at the median
  variant_result no_ci = measured;
  no_ci.name = "no_ci";
  no_ci.median_ci = {};
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1e9, .flops = 0}, h100_like(), {&measured, &no_ci}, roofline, checks);
  EXPECT_NEAR(measured.sol_memory_ci.low, 0.85 * 100 / 104, 1e-12);  // the slow end: less of the ceiling
  EXPECT_NEAR(measured.sol_memory_ci.high, 0.85 * 100 / 98, 1e-12);
  pair_result pair;
  pair.variants = {measured, no_ci};
  const auto json = to_json(pair);
  EXPECT_NEAR(json["variants"][0]["sol_memory_pct_ci"]["low"].get<double>(), 85.0 * 100 / 104, 1e-9);
  EXPECT_NEAR(json["variants"][0]["sol_memory_pct_ci"]["high"].get<double>(), 85.0 * 100 / 98, 1e-9);
  EXPECT_TRUE(json["variants"][1]["sol_memory_pct_ci"].is_null());
}

TEST(physics_gate, reports_sol_and_the_bound_and_passes_what_fits_under_the_ceiling) {
  variant_result copy;
  copy.name = "optimized";
  copy.achieved_bytes_per_s = 2.85e12;
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1e9, .flops = 0}, h100_like(), {&copy}, roofline, checks);
  EXPECT_NEAR(copy.sol_memory, 0.95, 1e-12);
  EXPECT_EQ(roofline["bound"], "memory");
  EXPECT_NEAR(roofline["ridge_flop_per_byte"].get<double>(), 20.0, 1e-9);
  EXPECT_TRUE(checks.empty());
}

TEST(physics_gate, fails_a_variant_above_105_percent_of_a_ceiling_with_v3) {
  variant_result liar;
  liar.name = "optimized";
  liar.achieved_bytes_per_s = 3.3e12;  // 110%
  variant_result flops;
  flops.name = "optimized_fma";
  flops.achieved_flops_per_s = 70e12;  // 117%
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1e9, .flops = 1e12}, h100_like(), {&liar, &flops}, roofline, checks);
  ASSERT_EQ(checks.size(), 2u);
  for (const auto& c : checks) {
    EXPECT_FALSE(c.passed);
    EXPECT_NE(std::find(c.codes.begin(), c.codes.end(), "V3"), c.codes.end());
  }
  EXPECT_EQ(roofline["bound"], "compute");  // 1000 FLOP/B is past the ridge
}

TEST(physics_gate, judges_a_tensor_core_variant_against_its_declared_unit_not_fp32) {
  auto ceilings = h100_like();
  ceilings.bf16_flops_per_s = 790e12;
  variant_result tensor;
  tensor.name = "optimized";
  tensor.math = aisp::math_unit::bf16_tensor;
  tensor.achieved_flops_per_s = 600e12;  // 10x the FP32 peak, 76% of the bf16 one
  variant_result undeclared = tensor;
  undeclared.name = "optimized_undeclared";
  undeclared.math = aisp::math_unit::fp32_simt;
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1e9, .flops = 1e12}, ceilings, {&tensor, &undeclared}, roofline, checks);
  EXPECT_NEAR(tensor.sol_compute, 600.0 / 790.0, 1e-9);
  ASSERT_EQ(checks.size(), 1u) << "only the variant that did not declare its tensor unit breaks physics";
  EXPECT_EQ(checks[0].variant, "optimized_undeclared");
  EXPECT_NE(checks[0].detail.find("fp32 ceiling"), std::string::npos) << checks[0].detail;
  EXPECT_EQ(aisp::math_unit_name(aisp::math_unit::fp8_tensor), "fp8_tensor");
}

// A PCIe pair on a link of h2d / d2h bytes/s: an honest variant ("optimized") and one that moves
// more than the path can ("optimized_cheat"), judged over `path`.
struct pcie_judgement {
  variant_result honest;
  nlohmann::json roofline;
  std::vector<check_result> checks;
};
pcie_judgement judge_over_pcie(double h2d, double d2h, double honest_bytes_per_s, double cheat_bytes_per_s,
                               aisp::data_path path) {
  auto ceilings = h100_like();
  ceilings.pcie_h2d_bytes_per_s = h2d;
  ceilings.pcie_d2h_bytes_per_s = d2h;
  pcie_judgement judged;
  judged.honest.name = "optimized";
  judged.honest.achieved_bytes_per_s = honest_bytes_per_s;
  variant_result cheat;
  cheat.name = "optimized_cheat";
  cheat.achieved_bytes_per_s = cheat_bytes_per_s;
  assess_speed_of_light({.bytes = 1e9, .flops = 0}, ceilings, {&judged.honest, &cheat}, judged.roofline, judged.checks, path);
  return judged;
}

TEST(physics_gate, judges_an_exp_bound_kernel_against_the_special_function_peak_too) {
  const auto ceilings = h100_like();  // MUFU peak: the FP32 peak / 16
  const double mufu = ceilings.special_function_ops_per_s();
  ASSERT_GT(mufu, 0);
  variant_result honest;
  honest.name = "optimized";
  honest.achieved_flops_per_s = 10e12;  // far under the FMA peak
  honest.achieved_special_function_ops_per_s = 0.8 * mufu;
  variant_result impossible = honest;
  impossible.name = "optimized_beyond";
  impossible.achieved_special_function_ops_per_s = 1.2 * mufu;
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1e6, .flops = 5e9, .special_function_ops = 1e9}, ceilings, {&honest, &impossible}, roofline,
                        checks);
  EXPECT_NEAR(honest.sol_special_function, 0.8, 1e-9);
  ASSERT_EQ(checks.size(), 1u) << "only the variant above the MUFU peak breaks physics";
  EXPECT_EQ(checks[0].variant, "optimized_beyond");
  EXPECT_NE(checks[0].detail.find("MUFU ceiling"), std::string::npos) << checks[0].detail;
  variant_result no_special;
  no_special.name = "optimized";
  no_special.achieved_flops_per_s = 10e12;
  std::vector<check_result> none;
  assess_speed_of_light({.bytes = 1e6, .flops = 5e9}, ceilings, {&no_special}, roofline, none);
  EXPECT_EQ(no_special.sol_special_function, 0.0) << "a pair that declares no special-function work is not held to MUFU";
  EXPECT_TRUE(none.empty());
}

TEST(physics_gate, judges_a_pcie_pair_against_both_directions_of_the_link) {
  // 200 GB/s: more than PCIe can carry both ways at once.
  const auto judged = judge_over_pcie(55e9, 55e9, 96e9, 200e9, aisp::data_path::pcie_both_directions);
  EXPECT_NEAR(judged.honest.sol_memory, 96.0 / 110.0, 1e-9);
  EXPECT_EQ(judged.roofline["bound"], "pcie");
  EXPECT_EQ(judged.roofline["data_path"], "pcie_both_directions");
  ASSERT_EQ(judged.checks.size(), 1u);
  EXPECT_EQ(judged.checks[0].variant, "optimized_cheat");
  EXPECT_NE(judged.checks[0].detail.find("PCIe"), std::string::npos) << judged.checks[0].detail;
}

TEST(physics_gate, judges_one_copy_at_a_time_against_one_direction_of_the_link) {
  // 80 GB/s: more than one direction can carry.
  const auto judged = judge_over_pcie(50e9, 60e9, 54e9, 80e9, aisp::data_path::pcie_one_direction);
  const double harmonic = 2 / (1 / 50e9 + 1 / 60e9);  // a round trip of equal halves
  EXPECT_NEAR(judged.honest.sol_memory, 54e9 / harmonic, 1e-9);
  EXPECT_EQ(judged.roofline["data_path"], "pcie_one_direction");
  ASSERT_EQ(judged.checks.size(), 1u);
  EXPECT_EQ(judged.checks[0].variant, "optimized_cheat");
  EXPECT_NE(judged.checks[0].detail.find("PCIe (one direction)"), std::string::npos) << judged.checks[0].detail;
}

TEST(physics_gate, says_unknown_when_no_ceiling_is_known) {
  variant_result v;
  v.achieved_bytes_per_s = 1e15;
  nlohmann::json roofline;
  std::vector<check_result> checks;
  assess_speed_of_light({.bytes = 1, .flops = 0}, ceiling_set{}, {&v}, roofline, checks);
  EXPECT_EQ(roofline["bound"], "unknown");
  EXPECT_TRUE(checks.empty());
}

TEST(datasheet, knows_the_cards_and_maps_device_names) {
  ASSERT_NE(find_datasheet("H100"), nullptr);
  EXPECT_DOUBLE_EQ(find_datasheet("h100")->memory_bytes_per_s, 3.35e12);
  EXPECT_EQ(datasheet_for_device("NVIDIA H100 80GB HBM3"), find_datasheet("h100"));
  EXPECT_EQ(datasheet_for_device("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(find_datasheet("x100"), nullptr);
  for (const auto& sheet : datasheets()) EXPECT_FALSE(sheet.source.empty()) << sheet.key;
}

TEST(ceilings, prefer_the_measured_cache_to_the_datasheet) {
  const auto dir = std::filesystem::temp_directory_path() / "aisp_ceilings_test";
  std::filesystem::remove_all(dir);
  setenv("AISP_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(gpu_ceilings("NVIDIA H100 80GB HBM3", "GPU-test", 13000).source, "datasheet h100");
  std::filesystem::create_directories(ceilings_cache_file("GPU-test", 13000).parent_path());
  std::ofstream(ceilings_cache_file("GPU-test", 13000)) << R"({"ceilings":{"memory_bytes_per_s":2.99e12,"fp32_flops_per_s":6.5e13}})";
  const auto c = gpu_ceilings("NVIDIA H100 80GB HBM3", "GPU-test", 13000);
  EXPECT_EQ(c.source, "measured");
  EXPECT_DOUBLE_EQ(c.memory_bytes_per_s, 2.99e12);
  // Note [tensor ceilings]: a cuBLASLt rate under the datasheet's peak does not cap the gate.
  std::ofstream(ceilings_cache_file("GPU-test", 13000))
      << R"({"ceilings":{"memory_bytes_per_s":2.99e12,"fp32_flops_per_s":6.5e13,"bf16_flops_per_s":8.17e14}})";
  EXPECT_DOUBLE_EQ(gpu_ceilings("NVIDIA H100 80GB HBM3", "GPU-test", 13000).bf16_flops_per_s,
                   find_datasheet("h100")->bf16_flops_per_s);
  std::ofstream(ceilings_cache_file("GPU-test", 13000)) << "{ not json";
  EXPECT_EQ(gpu_ceilings("NVIDIA H100 80GB HBM3", "GPU-test", 13000).source, "datasheet h100");  // corrupt: not trusted
  unsetenv("AISP_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(ceilings, take_the_best_memory_probe_and_the_fma_peak) {
  const auto probe = [](const char* name, const char* group, double median) {
    probe_result p;
    p.name = name;
    p.group = group;
    p.median = median;
    return p;
  };
  const auto copy = probe("copy_kernel", "memory", 2.85e12);
  const auto memcpy_probe = probe("copy_memcpy", "memory", 2.99e12);
  const auto fma = probe("fp32_fma", "fp32", 6.5e13);
  auto broken = probe("triad", "memory", 9e12);
  broken.error = "failed";
  const auto c = ceilings_from({copy, memcpy_probe, fma, broken});
  EXPECT_DOUBLE_EQ(c.memory_bytes_per_s, 2.99e12);
  EXPECT_DOUBLE_EQ(c.fp32_flops_per_s, 6.5e13);
  EXPECT_EQ(c.source, "measured");
}

TEST(ceilings, take_the_best_pcie_repetition_since_shared_links_only_slow_copies) {
  probe_result h2d;
  h2d.name = "h2d_pinned";
  h2d.group = "pcie";
  h2d.median = 48.8e9;
  h2d.max = 53.0e9;
  probe_result d2h = h2d;
  d2h.name = "d2h_pinned";
  d2h.median = 55.1e9;
  d2h.max = 55.3e9;
  const auto c = ceilings_from({h2d, d2h});
  EXPECT_DOUBLE_EQ(c.pcie_h2d_bytes_per_s, 53.0e9);
  EXPECT_DOUBLE_EQ(c.pcie_d2h_bytes_per_s, 55.3e9);
}

TEST(host_ceilings, measure_a_positive_copy_bandwidth) {
  const auto c = host_ceilings();
  EXPECT_GT(c.memory_bytes_per_s, 1e8);
  EXPECT_NE(c.source.find("host copy"), std::string::npos);
}

// Note [host ceiling under load]: rounds whose slowest copier held a CPU for most of the round
// count; a round in which the copiers waited for one (it read the load, not the memory) does not.
TEST(host_ceilings, a_round_whose_copiers_waited_for_a_cpu_does_not_count) {
  constexpr std::size_t mib64 = 64u << 20;
  const double moved = 2.0 * 2 * static_cast<double>(mib64);  // two copiers, each reading and writing 64 MiB
  const auto c = host_copy_ceiling({{moved / 28e9, {0.97 * moved / 28e9, 0.93 * moved / 28e9}},
                                    {moved / 15e9, {0.45 * moved / 15e9, 0.40 * moved / 15e9}},
                                    {moved / 27e9, {0.99 * moved / 27e9, 0.95 * moved / 27e9}}},
                                   mib64);
  EXPECT_NEAR(c.memory_bytes_per_s, 28e9, 1e6);
  EXPECT_EQ(c.source, "host copy (2 threads)");
  // A loaded round that happened to read faster is no more trusted than a slow one.
  const auto fast_loaded = host_copy_ceiling({{moved / 28e9, {0.97 * moved / 28e9, 0.93 * moved / 28e9}},
                                              {moved / 35e9, {0.5 * moved / 35e9, 0.5 * moved / 35e9}}},
                                             mib64);
  EXPECT_NEAR(fast_loaded.memory_bytes_per_s, 28e9, 1e6);
}

// With no quiet round, each copier's rate on its own CPU time: above the copy's wall-time rate,
// never under it, and the source says the machine was loaded.
TEST(host_ceilings, a_machine_loaded_through_every_round_reads_high_and_says_so) {
  constexpr std::size_t mib64 = 64u << 20;
  const double moved = 2.0 * 2 * static_cast<double>(mib64);
  const auto c = host_copy_ceiling({{moved / 15e9, {0.5 * moved / 15e9, 0.45 * moved / 15e9}},
                                    {moved / 20e9, {0.4 * moved / 20e9, 0.4 * moved / 20e9}}},
                                   mib64);
  EXPECT_NEAR(c.memory_bytes_per_s, 50e9, 1e6);  // 20 GB/s on the wall over 0.4 of it on a CPU
  EXPECT_GT(c.memory_bytes_per_s, 20e9);
  EXPECT_NE(c.source.find("a loaded machine"), std::string::npos) << c.source;
  EXPECT_EQ(host_copy_ceiling({}, mib64).memory_bytes_per_s, 0.0) << "no round, no ceiling";
}

TEST(roofline_svg, draws_ceilings_points_and_bars_in_well_formed_svg) {
  const nlohmann::json results = {
      {"started_at", "2026-11-26T00:00:00Z"},
      {"pairs",
       {{{"target", "ch09:gemm"},
         {"roofline", {{"arithmetic_intensity_flop_per_byte", 50.0}, {"ceilings", {{"source", "measured"}, {"memory_bytes_per_s", 3e12}, {"fp32_flops_per_s", 6e13}}}}},
         {"variants", {{{"name", "baseline"}, {"achieved_flops_per_s", 1e12}}, {{"name", "optimized"}, {"achieved_flops_per_s", 4e13}}}}},
        {{"target", "ch07:copy<x>"},
         {"roofline", {{"arithmetic_intensity_flop_per_byte", 0.0}}},
         {"variants", {{{"name", "optimized"}, {"sol_memory_pct", 95.0}}, {{"name", "baseline_twin"}, {"sol_memory_pct", 20.0}}}}}}}};
  const auto svg = roofline_svg(results);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("<polyline class=\"roof\""), std::string::npos);
  EXPECT_NE(svg.find("ch09:gemm:optimized"), std::string::npos);
  EXPECT_NE(svg.find("95% ch07:copy&lt;x&gt;:optimized"), std::string::npos);
  EXPECT_EQ(svg.find("baseline_twin"), std::string::npos);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<text"), count("</text>"));
  EXPECT_EQ(count("<svg"), count("</svg>"));
  EXPECT_THROW((void)roofline_svg(nlohmann::json::object()), contract_error);
  // `bench verify` writes "roofline": null: a one-line error, not a JSON type error.
  const nlohmann::json verified = {{"pairs", {{{"target", "ch09:gemm"}, {"roofline", nullptr}, {"variants", nlohmann::json::array()}}}}};
  try {
    (void)roofline_svg(verified);
    ADD_FAILURE() << "a run without speeds was drawn";
  } catch (const contract_error& error) {
    EXPECT_NE(std::string(error.what()).find("measured no speeds"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace aisp

TEST(ceilings, a_multi_gpu_jobs_memory_and_math_add_up_its_links_do_not) {
  aisp::ceiling_set one;
  one.memory_bytes_per_s = 3e12;
  one.bf16_flops_per_s = 9e14;
  one.fp32_flops_per_s = 6e13;
  one.interconnect_bytes_per_s = 4.5e11;
  one.pcie_h2d_bytes_per_s = 5e10;
  const auto four = one.for_gpus(4);
  EXPECT_DOUBLE_EQ(four.memory_bytes_per_s, 12e12);
  EXPECT_DOUBLE_EQ(four.bf16_flops_per_s, 36e14);
  EXPECT_DOUBLE_EQ(four.fp32_flops_per_s, 24e13);
  EXPECT_DOUBLE_EQ(four.interconnect_bytes_per_s, 4.5e11);
  EXPECT_DOUBLE_EQ(four.pcie_h2d_bytes_per_s, 5e10);
  EXPECT_DOUBLE_EQ(four.bandwidth_ceiling(aisp::data_path::gpu_interconnect), 4.5e11);
}
