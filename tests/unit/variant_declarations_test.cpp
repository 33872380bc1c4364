// What a variant declares beyond its code: a precision change (held to its own tolerance) and a
// vendor-library peer (every variant's ratio to it shown in every view).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "results/report_formats.hpp"
#include "results/result_json.hpp"
#include "harness/recorded_metrics.hpp"
#include "results/terminal_table.hpp"
#include "verify/tolerance.hpp"

namespace {

using aisp::dtype;

aisp::pair base_pair() {
  const auto count = [](const aisp::workload& w) { return w.get("n"); };
  return aisp::pair("ch01:gemm")
      .benchmark_size({{"n", 64}})
      .validation_size({{"n", 7}})
      .held_out_size({{"n", 9}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, count)
      .work([](const aisp::workload&) { return aisp::work_amount{1, 0}; })
      .reference([](aisp::reference_io&) {})
      .add_variant("baseline", "fp32", [](aisp::run_context&) {});
}

aisp::variant bf16_variant() {
  aisp::variant v;
  v.name = "optimized";
  v.summary = "bf16 tensor cores";
  v.run = [](aisp::run_context&) {};
  v.library = "cuBLAS";
  v.precision = "bf16 inputs, fp32 accumulate";
  v.precision_tolerance = aisp::tolerance{.rtol = 0, .atol = 0.05, .max_rel_l2 = 1e-2, .reason = "bf16 rounding of inputs"};
  return v;
}

TEST(precision_change, a_declared_variant_is_held_to_its_own_tolerance_and_the_others_to_the_pairs) {
  auto declared = base_pair().add_variant(bf16_variant());
  declared.validate();
  EXPECT_EQ(aisp::verify::effective_tolerance(declared, dtype::f32, "optimized").atol, 0.05);
  EXPECT_EQ(aisp::verify::effective_tolerance(declared, dtype::f32, "baseline").rtol, 1e-5);
  EXPECT_EQ(aisp::verify::effective_tolerance(declared, dtype::f32, "baseline_twin").rtol, 1e-5);
}

TEST(precision_change, without_a_tolerance_and_its_reason_is_a_contract_gap) {
  auto v = bf16_variant();
  v.precision_tolerance.reset();
  auto missing = base_pair().add_variant(v);
  EXPECT_THROW(missing.validate(), aisp::contract_error);
  v = bf16_variant();
  v.precision_tolerance->reason.clear();
  auto unexplained = base_pair().add_variant(v);
  EXPECT_THROW(unexplained.validate(), aisp::contract_error);
  v = bf16_variant();
  v.precision.clear();
  auto undeclared = base_pair().add_variant(v);
  EXPECT_THROW(undeclared.validate(), aisp::contract_error);
}

// Note [declared tolerance ceiling]: a red team's "fp32 polynomial sine" declared a relative L2
// bound of 5 and returned the series' first term (2026-12-04).
// Note [printable names]: a control character in a declared name or text is a contract gap, named
// escaped (a terminal never receives it).
TEST(printable_names, a_control_character_in_a_name_or_text_is_a_contract_gap) {
  auto forged = aisp::pair("rt5:name\r\x1b[2K forged faster\x1b[8m")
                    .benchmark_size({{"n", 64}})
                    .validation_size({{"n", 7}})
                    .held_out_size({{"n", 9}})
                    .input("x", dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
                    .output("y", dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
                    .work([](const aisp::workload&) { return aisp::work_amount{1, 0}; })
                    .reference([](aisp::reference_io&) {})
                    .add_variant("baseline", "fp32", [](aisp::run_context&) {})
                    .add_variant("optimized", "tab\there", [](aisp::run_context&) {});
  try {
    forged.validate();
    FAIL() << "a target with control characters validated";
  } catch (const aisp::contract_error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("the target holds the control character \\x0d"), std::string::npos) << what;
    EXPECT_NE(what.find("variant optimized holds the control character \\x09"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << "the message carries the escape itself";
  }
  auto fine = base_pair().summary("µs and × stay");
  fine.add_variant("optimized", "bf16", [](aisp::run_context&) {});
  EXPECT_NO_THROW(fine.validate());
}

TEST(declared_tolerance, a_relative_l2_bound_over_the_ceiling_or_not_finite_is_a_contract_gap) {
  auto v = bf16_variant();
  v.precision_tolerance = aisp::tolerance{.rtol = 5, .atol = 5, .max_rel_l2 = 5, .reason = "a polynomial sine"};
  auto loose = base_pair().add_variant(v);
  try {
    loose.validate();
    FAIL() << "a relative L2 bound of 5 passed";
  } catch (const aisp::contract_error& e) {
    EXPECT_NE(std::string(e.what()).find("relative L2 error of 5"), std::string::npos) << e.what();
  }
  v.precision_tolerance->max_rel_l2 = std::nan("");
  auto not_a_number = base_pair().add_variant(v);
  EXPECT_THROW(not_a_number.validate(), aisp::contract_error);
  auto overridden = base_pair()
                        .add_variant("optimized", "o", [](aisp::run_context&) {})
                        .tolerance_override(aisp::tolerance{.rtol = 1e-3, .atol = 1e-3, .max_rel_l2 = 0.5, .reason = "loose"});
  EXPECT_THROW(overridden.validate(), aisp::contract_error);
  v.precision_tolerance->max_rel_l2 = aisp::max_declared_rel_l2;  // the ceiling itself is allowed
  EXPECT_NO_THROW(base_pair().add_variant(v).validate());
}

TEST(declared_tolerance, one_without_an_l2_bound_takes_its_rtol_within_the_dtype_default_and_the_ceiling) {
  auto v = bf16_variant();
  v.precision_tolerance = aisp::tolerance{.rtol = 5, .atol = 5, .max_rel_l2 = 0, .reason = "element-wise only"};
  auto unbounded = base_pair().add_variant(v);
  unbounded.validate();
  EXPECT_EQ(aisp::verify::effective_tolerance(unbounded, dtype::f32, "optimized").max_rel_l2, aisp::max_declared_rel_l2);
  v.precision_tolerance->rtol = 1e-3;
  auto tight = base_pair().add_variant(v);
  EXPECT_EQ(aisp::verify::effective_tolerance(tight, dtype::f32, "optimized").max_rel_l2, 1e-3);
  EXPECT_EQ(aisp::verify::effective_tolerance(tight, dtype::bf16, "optimized").max_rel_l2, 1e-2);  // bf16's default
  EXPECT_EQ(aisp::verify::effective_tolerance(tight, dtype::i32, "optimized").max_rel_l2, 1e-3);
}

TEST(peer_variant, must_name_its_library_and_only_one_is_allowed) {
  aisp::variant peer;
  peer.name = "peer_cublas";
  peer.summary = "cuBLAS";
  peer.run = [](aisp::run_context&) {};
  auto nameless = base_pair().add_variant("optimized", "o", [](aisp::run_context&) {}).add_variant(peer);
  try {
    nameless.validate();
    FAIL() << "a peer without a library passed";
  } catch (const aisp::contract_error& e) {
    EXPECT_NE(std::string(e.what()).find("must declare the library"), std::string::npos) << e.what();
  }
  peer.library = "cuBLAS";
  auto one = base_pair().add_variant("optimized", "o", [](aisp::run_context&) {}).add_variant(peer);
  EXPECT_NO_THROW(one.validate());
  auto second = peer;
  second.name = "peer_cutlass";
  auto two = base_pair().add_variant("optimized", "o", [](aisp::run_context&) {}).add_variant(peer).add_variant(second);
  EXPECT_THROW(two.validate(), aisp::contract_error);
}

aisp::suite_result suite_with_peer() {
  aisp::suite_result suite;
  suite.config = nlohmann::json::object();
  suite.device = nlohmann::json::object();
  aisp::pair_result p;
  p.target = "ch09:sgemm";
  for (const auto* name : {"baseline", "optimized", "peer_cublas"}) {
    aisp::variant_result v;
    v.name = name;
    v.stats.count = 10;
    v.stats.median = 1e-3;
    p.variants.push_back(v);
  }
  p.variants[0].vs_peer = aisp::stats::ratio_estimate{.point = 0.02, .low = 0.019, .high = 0.021};
  p.variants[1].vs_peer = aisp::stats::ratio_estimate{.point = 0.72, .low = 0.70, .high = 0.74};
  p.variants[1].precision = "bf16 inputs, fp32 accumulate";
  for (const auto* name : {"optimized", "peer_cublas"}) {
    aisp::speedup_result s;
    s.variant = name;
    s.speedup = {.point = 36, .low = 35, .high = 37};
    s.verdict = "faster";
    p.speedups.push_back(s);
  }
  suite.pairs.push_back(p);
  return suite;
}

TEST(peer_variant, every_view_shows_the_share_of_the_peer_and_the_precision_change) {
  const auto suite = suite_with_peer();
  const auto table = aisp::render_table(suite);
  EXPECT_NE(table.find("vs peer"), std::string::npos) << table;
  EXPECT_NE(table.find("72% [70, 74]"), std::string::npos) << table;
  EXPECT_NE(table.find("baseline: 2% [2, 2] of the peer"), std::string::npos) << table;
  EXPECT_NE(table.find("declared precision change: bf16 inputs"), std::string::npos) << table;

  const auto document = aisp::to_json(suite);
  const auto md = aisp::report_markdown(document);
  EXPECT_NE(md.find("72% [70, 74]"), std::string::npos) << md;
  EXPECT_NE(md.find("| optimized * |"), std::string::npos) << md;
  EXPECT_NE(md.find("declared precision change: bf16 inputs"), std::string::npos) << md;
  const auto csv = aisp::report_csv(document);
  EXPECT_NE(csv.find("vs_peer"), std::string::npos);
  EXPECT_NE(csv.find("0.7200,0.7000,0.7400,\"bf16 inputs, fp32 accumulate\""), std::string::npos) << csv;
  EXPECT_EQ(document["pairs"][0]["variants"][2]["vs_peer"], nullptr);
}

// A variant that never ran (its pair failed before sampling) has no median: the reports say "—"
// (the CSV leaves it empty), not 0.00 us.
TEST(reports, a_variant_that_never_ran_shows_no_median) {
  auto suite = suite_with_peer();
  suite.pairs[0].variants[1].stats = {};
  const auto document = aisp::to_json(suite);
  const auto md = aisp::report_markdown(document);
  EXPECT_NE(md.find("| baseline | "), std::string::npos) << md;
  EXPECT_NE(md.find("1000.00 µs"), std::string::npos) << md;
  EXPECT_NE(md.find("| optimized * | pass | — |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| 0.00 µs"), std::string::npos) << md;
  const auto csv = aisp::report_csv(document);
  EXPECT_NE(csv.find("ch09:sgemm,optimized,pass,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("ch09:sgemm,baseline,pass,1000.0000,,,,"), std::string::npos) << csv;  // no speedup of its own: empty, not 0.00000
  EXPECT_NE(aisp::report_html(document).find("<td>optimized</td><td>pass</td><td>—</td>"), std::string::npos);
}

// A pair that never ran a variant (skipped without a GPU) keeps a row in every report, and the
// Markdown and HTML say why below the table; the CSV carries the reason in its last field.
TEST(reports, a_skipped_pair_keeps_its_row_and_its_reason) {
  auto suite = suite_with_peer();
  aisp::pair_result skipped;
  skipped.target = "ch07:copy";
  skipped.status = "skip";
  skipped.message = "no CUDA device";
  suite.pairs.push_back(skipped);
  const auto document = aisp::to_json(suite);
  const auto md = aisp::report_markdown(document);
  EXPECT_NE(md.find("| ch07:copy | — | skip | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("- ch07:copy (skip): no CUDA device"), std::string::npos) << md;
  const auto csv = aisp::report_csv(document);
  EXPECT_NE(csv.find("ch07:copy,—,skip,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",no CUDA device\n"), std::string::npos) << csv;
  EXPECT_NE(aisp::report_html(document).find("<li>ch07:copy (skip): no CUDA device</li>"), std::string::npos);
  EXPECT_TRUE(aisp::to_json(suite)["pairs"].size() == 2);
  EXPECT_FALSE(suite.nothing_measured());
  suite.pairs.erase(suite.pairs.begin());
  EXPECT_TRUE(suite.nothing_measured());
}

// The verified column names the failed check beside its code: "NO (S2 host-idle)", not "NO (S2)".
TEST(reports, the_verified_column_names_the_failed_check) {
  auto suite = suite_with_peer();
  suite.pairs[0].checks.push_back({.check = "host-idle", .codes = {"S2"}, .passed = false, .variant = "optimized", .detail = "busy"});
  const auto table = aisp::render_table(suite);
  EXPECT_NE(table.find("NO (S2 host-idle)"), std::string::npos) << table;
}

// Note [launch gate]: a variant the gate stopped holding says so, with how many samples it held.
TEST(launch_gate_report, a_variant_sampled_partly_ungated_is_named_with_its_count) {
  auto suite = suite_with_peer();
  auto& p = suite.pairs[0];
  p.launch_gate = true;
  aisp::sample_record held;
  held.gated = true;
  for (auto& v : p.variants) v.samples.assign(10, held);
  for (std::size_t i = 1; i < 10; ++i) p.variants[1].samples[i].gated = false;
  const auto table = aisp::render_table(suite);
  EXPECT_NE(table.find("ch09:sgemm optimized: the launch gate held 1 of 10 samples"), std::string::npos) << table;
  EXPECT_EQ(table.find("ch09:sgemm baseline: the launch gate"), std::string::npos) << table;
  p.launch_gate = false;  // --no-launch-gate, or a pair that times its host launches: nothing to say
  EXPECT_EQ(aisp::render_table(suite).find("the launch gate held"), std::string::npos);
  EXPECT_EQ(aisp::to_json(suite)["pairs"][0]["launch_gate"], false);
}

TEST(goal_reports, a_latency_pair_shows_its_percentiles_and_statistic_in_every_report_format) {
  auto suite = suite_with_peer();
  auto& p = suite.pairs[0];
  p.goal = "latency";
  p.verdict_statistic = "p99";
  p.variants[1].goal_metrics = {{"p50_s", {{"point", 1e-3}, {"low", 0.9e-3}, {"high", 1.1e-3}}},
                                {"p99_s", {{"point", 4e-3}, {"low", 3.5e-3}, {"high", 4.5e-3}}}};
  const auto document = aisp::to_json(suite);
  const auto md = aisp::report_markdown(document);
  EXPECT_NE(md.find("latency / throughput"), std::string::npos) << md;
  EXPECT_NE(md.find("p99 4.000 ms"), std::string::npos) << md;
  EXPECT_NE(md.find("36.000x [35.000, 37.000] p99"), std::string::npos) << md;
  const auto csv = aisp::report_csv(document);
  EXPECT_NE(csv.find("verdict_statistic,p50_s,p99_s,calls_per_s"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",p99,0.001,0.004,0"), std::string::npos) << csv;
  const auto html = aisp::report_html(document);
  EXPECT_NE(html.find("p50 1.000 ms"), std::string::npos) << html.substr(0, 3000);
}

// Issue 21: a serving pair's recorded TTFT/TPOT (and counts) reach every report, not only results.json.
TEST(goal_reports, recorded_metrics_show_their_percentiles_in_every_report_format) {
  auto suite = suite_with_peer();
  const auto estimate = [](double point) { return nlohmann::json{{"point", point}, {"low", 0.9 * point}, {"high", 1.1 * point}}; };
  suite.pairs[0].variants[1].goal_metrics = {
      {"items_per_s", estimate(1500)},
      {"item", "tokens"},
      {"recorded",
       {{"tpot_s", {{"count", 24}, {"mean", estimate(2e-3)}, {"p50", estimate(2e-3)}, {"p99", estimate(3e-3)}}},
        {"accepted_drafts", {{"count", 40}, {"mean", estimate(2.5)}, {"p50", estimate(2)}, {"p99", estimate(4)}}}}}};
  const auto document = aisp::to_json(suite);
  const auto md = aisp::report_markdown(document);
  EXPECT_NE(md.find("tokens/s"), std::string::npos) << md;
  EXPECT_NE(md.find("tpot_s mean 2.000 ms [1.800 ms, 2.200 ms], p50 2.000 ms"), std::string::npos) << md;
  EXPECT_NE(md.find("accepted_drafts mean 2.5 [2.25, 2.75], p50 2 [1.8, 2.2], p99 4"), std::string::npos) << md;
  const auto csv = aisp::report_csv(document);
  EXPECT_NE(csv.find(",item,recorded,message\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("p99 3.000 ms [2.700 ms, 3.300 ms]"), std::string::npos) << csv;
  EXPECT_NE(aisp::report_html(document).find("tpot_s mean 2.000 ms"), std::string::npos);
}

}  // namespace

namespace {

TEST(compute_capability, a_pair_that_needs_sm90_runs_there_and_says_why_elsewhere) {
  auto declared = aisp::pair("labs/gemm:x").needs_compute_capability(9, 0, "wgmma and setmaxnreg");
  EXPECT_EQ(declared.unsupported_on(9, 0), "");
  const auto why = declared.unsupported_on(10, 0);
  EXPECT_NE(why.find("compute capability 9.0 (wgmma and setmaxnreg); this one is 10.0"), std::string::npos) << why;
  EXPECT_EQ(aisp::pair("ch07:copy").unsupported_on(10, 0), "");  // no need declared: runs anywhere
}

}  // namespace

TEST(speed_of_light_column, shows_the_special_function_share_beside_the_memory_share) {
  auto suite = suite_with_peer();
  auto& optimized = suite.pairs.front().variants[1];
  optimized.achieved_bytes_per_s = 1e12;
  optimized.sol_memory = 0.50;
  optimized.sol_special_function = 0.766;
  const auto table = aisp::render_table(suite);
  EXPECT_NE(table.find("(50%, SFU 77%)"), std::string::npos) << table;
  optimized.sol_special_function = 0;
  EXPECT_EQ(aisp::render_table(suite).find("SFU"), std::string::npos) << "no SFU share where the pair declares none";
}

// Note [recorded metrics]: a metric named `*_s` is a time; any other is a count, and printed as one.
TEST(recorded_metric_format, prints_seconds_as_durations_and_counts_as_numbers) {
  EXPECT_EQ(aisp::format_recorded("tpot_s", 0.0025), aisp::format_duration(0.0025));
  EXPECT_EQ(aisp::format_recorded("accepted_drafts", 2.5), "2.5");
  EXPECT_EQ(aisp::format_recorded("accepted_drafts", 0.04233), "0.04233");
  EXPECT_EQ(aisp::format_recorded("accepted_drafts", 4), "4");
  EXPECT_TRUE(aisp::is_time_metric("ttft_s"));
  EXPECT_FALSE(aisp::is_time_metric("accepted_drafts"));
}

// Note [declared threads used]: a variant may run on fewer threads than the pair declares, never
// more, and the judge holds each variant to its own count.
TEST(declared_threads, a_variant_runs_on_its_own_count_up_to_the_pairs) {
  auto serial = bf16_variant();
  serial.precision.clear();
  serial.precision_tolerance.reset();
  serial.host_threads = 1;
  auto declared = base_pair().host_threads(4, "a pool of three helpers").add_variant(serial);
  EXPECT_NO_THROW(declared.validate());
  EXPECT_EQ(declared.threads_of(declared.find_variant("optimized")), 1);
  EXPECT_EQ(declared.threads_of(declared.find_variant("baseline")), 4);
  serial.host_threads = 8;
  auto wider = base_pair().host_threads(4, "a pool of three helpers").add_variant(serial);
  try {
    wider.validate();
    FAIL() << "a variant on more threads than the pair validated";
  } catch (const aisp::contract_error& error) {
    EXPECT_NE(std::string(error.what()).find("variant optimized declares 8 threads; the pair's host_threads (4)"), std::string::npos)
        << error.what();
  }
}

// A load-sensitive check failed on a busy machine: the table says how busy, and what to do;
// results.json keeps each variant's figure (null where too few visits were read).
TEST(reports, a_load_sensitive_failure_on_a_busy_machine_says_the_machine_was_busy) {
  auto suite = suite_with_peer();
  auto& p = suite.pairs.front();
  p.variants[0].other_work_cpus = 1.27;
  p.variants[1].other_work_cpus = 0.4;
  p.checks.push_back({.check = "host-idle", .codes = {"S2"}, .passed = false, .variant = "baseline", .detail = "waited"});
  const auto table = aisp::render_table(suite);
  EXPECT_NE(table.find("the machine was busy: other work kept up to 1.27 CPUs busy beside the timed visits (baseline's)"),
            std::string::npos) << table;
  const auto document = aisp::to_json(suite);
  EXPECT_DOUBLE_EQ(document["pairs"][0]["variants"][0]["other_work_cpus"].get<double>(), 1.27);
  EXPECT_TRUE(document["pairs"][0]["variants"][2]["other_work_cpus"].is_null());
  // A quiet machine, or a failure no load explains, gets no such note.
  p.variants[0].other_work_cpus = 0.1;
  EXPECT_EQ(aisp::render_table(suite).find("the machine was busy"), std::string::npos);
  p.variants[0].other_work_cpus = 1.27;
  p.checks.back().check = "escaped-kernel";
  EXPECT_EQ(aisp::render_table(suite).find("the machine was busy"), std::string::npos);
}

// `bench verify`'s table: a row is flagged for its own failed checks, not for another variant's
// (a user's walkthrough: the baseline read "flagged" when only the candidate had failed).
TEST(reports, the_verify_table_flags_only_the_variant_that_failed) {
  aisp::suite_result suite;
  suite.config = nlohmann::json::object();
  suite.device = nlohmann::json::object();
  aisp::pair_result p;
  p.target = "mine:verify_only";
  p.status = "fail";
  p.failure_kind = "verify";
  p.flagged = true;
  for (const auto* name : {"baseline", "optimized"}) {
    aisp::variant_result v;
    v.name = name;
    v.verified = std::string(name) == "baseline";
    p.variants.push_back(v);
  }
  p.checks.push_back({.check = "reference", .codes = {"O10"}, .passed = false, .variant = "optimized", .detail = "unwritten"});
  suite.pairs.push_back(p);
  const auto table = aisp::render_table(suite);
  const auto row_of = [&](const std::string& variant) {
    const auto at = table.find("mine:verify_only  " + variant);
    return at == std::string::npos ? std::string() : table.substr(at, table.find('\n', at) - at);
  };
  EXPECT_NE(row_of("baseline").find("checked"), std::string::npos) << table;
  EXPECT_EQ(row_of("baseline").find("flagged"), std::string::npos) << table;
  EXPECT_NE(row_of("optimized").find("flagged"), std::string::npos) << table;
}
