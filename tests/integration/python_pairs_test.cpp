// PyTorch pairs through --python (issue 20): the tutorial's host pair is judged with every check
// and passes; planted cheats are caught as in the lab; a broken pair file, a raising variant and
// a missing interpreter are one-line errors, never crashes. Needs Debian's python3-torch under
// /usr/bin/python3 (scripts/setup.sh installs it).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "judged_pair.hpp"
#include "one_line_error.hpp"

namespace {

using aisp::testing::run_command;
using nlohmann::json;

using aisp::testing::failed_checks;
using aisp::testing::judged;

std::string source(const std::string& path) { return aisp::testing::source_path(path); }

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

judged judge(const std::string& file, const std::string& target, const std::string& env = "",
             const std::string& timing = "--max-time 0.5") {
  return aisp::testing::judge_through("--python", file, target, "run " + timing, env);
}

TEST(python_pairs, the_tutorial_host_pair_is_verified_with_every_check_passing) {
  const auto judged_pair = judge("examples/python/host_pairs.py", "mine:gelu_affine");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("status", ""), "pass") << judged_pair.pair.dump(1).substr(0, 4000);
  for (const auto* variant : {"baseline", "optimized", "baseline_twin"})
    EXPECT_TRUE(failed_checks(judged_pair.pair, variant).empty()) << variant << ": " << judged_pair.pair.at("checks").dump(1);
  // The checks that cannot apply say so instead of vanishing (docs/python_pairs.md).
  bool waived = false;
  for (const auto& check : judged_pair.pair.at("checks"))
    waived = waived || check.value("detail", "").find("not applicable to a Python pair") != std::string::npos;
  EXPECT_TRUE(waived) << judged_pair.pair.at("checks").dump(1);
}

// Note [declared threads]: p.threads(2) on a CPU pair; torch's second thread is the declared
// pool's (before, worker-cpu and late-write failed this honest pair, 2026-12-03).
TEST(python_pairs, a_cpu_pair_on_declared_threads_is_not_read_as_a_helper) {
  const auto judged_pair = judge("tests/python/threaded_pairs.py", "py_threads:two_intra_op_threads");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("host_threads", 0), 2) << judged_pair.pair.dump(1).substr(0, 2000);
  EXPECT_EQ(judged_pair.pair.value("host_threads_reason", ""), "torch splits each elementwise op over two intra-op threads");
  for (const auto* variant : {"baseline", "optimized", "baseline_twin"}) {
    const auto failed = failed_checks(judged_pair.pair, variant);
    for (const auto* check : {"worker-cpu", "late-write", "background-thread", "threads-used"})
      EXPECT_EQ(std::count(failed.begin(), failed.end(), check), 0) << variant << ": " << judged_pair.pair.at("checks").dump(1);
  }
}

// Note [declared threads used]: a baseline may run on fewer threads than the pair when it says so
// (results show each variant's count); one that drops to one thread undeclared fails threads-used.
TEST(python_pairs, a_variant_declares_the_threads_it_runs_on) {
  const auto judged_pair = judge("tests/python/threaded_pairs.py", "py_threads:serial_baseline_declared");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  std::map<std::string, int> threads;
  for (const auto& v : judged_pair.pair.at("variants")) threads[v.value("name", "")] = v.value("host_threads", 0);
  EXPECT_EQ(threads["baseline"], 1) << judged_pair.pair.dump(1).substr(0, 2000);
  EXPECT_EQ(threads["optimized"], 2);
  for (const auto* variant : {"baseline", "optimized", "baseline_twin"}) {
    const auto failed = failed_checks(judged_pair.pair, variant);
    EXPECT_EQ(std::count(failed.begin(), failed.end(), "threads-used"), 0) << variant << ": " << judged_pair.pair.at("checks").dump(1);
  }
}

// A variant that computes in another precision declares it with its tolerance
// (@p.variant(precision=..., tolerance=...)) and is verified against that; the same variant
// declaring nothing is held to the baseline's accuracy (a user's walkthrough found no way to
// declare it from Python, 2026-12-04).
TEST(python_pairs, a_variant_declares_the_precision_it_computes_in) {
  const auto declared = judge("tests/python/precision_pairs.py", "py_precision:declared", "", "--max-time 0.3");
  ASSERT_TRUE(declared.pair.is_object()) << declared.run.output;
  for (const auto* check : {"reference", "accuracy", "held-out"})
    EXPECT_FALSE(has(failed_checks(declared.pair, "optimized"), check)) << check << ": " << declared.pair.at("checks").dump(1);
  const auto undeclared = judge("tests/python/precision_pairs.py", "py_precision:undeclared", "", "--max-time 0.3");
  ASSERT_TRUE(undeclared.pair.is_object()) << undeclared.run.output;
  const auto failed = failed_checks(undeclared.pair, "optimized");
  EXPECT_TRUE(has(failed, "reference") || has(failed, "accuracy")) << undeclared.pair.at("checks").dump(1);
}

// Note [worker state]: a baseline whose setup slowed its own worker (glibc's mmap threshold
// lowered; oneDNN turned off) fails worker-state; its rival, the same code, does not (red team
// six: 3.4x and 13.5x for the same code, 2026-12-04).
TEST(python_cheats, a_baseline_that_slows_its_own_worker_fails_worker_state) {
  for (const auto* target :
       {"py_state:baseline_lowers_the_mmap_threshold", "py_state:baseline_turns_off_onednn", "py_state:baseline_collects_all_the_time"}) {
    const auto judged_pair = judge("tests/python/worker_state_pairs.py", target, "", "--max-time 0.3");
    ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
    EXPECT_TRUE(has(failed_checks(judged_pair.pair, "baseline"), "worker-state")) << target << ": " << judged_pair.pair.at("checks").dump(1);
    EXPECT_FALSE(has(failed_checks(judged_pair.pair, "optimized"), "worker-state")) << target;
  }
}

// Note [watched python state]: red teams eight to ten's forms, each a baseline slowed by a
// process-wide setting the first probes did not see (tests/python/hidden_state_pairs.py says
// which). worker-state and sandbox are not load-sensitive: the file's pairs are judged once, in
// one verify run.
TEST(python_cheats, a_baseline_slowed_out_of_the_first_probes_sight_fails_worker_state) {
  const auto dir = (std::filesystem::temp_directory_path() / ("aisp_hidden_state_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  // `bench verify` (a token of sampling) reads the state probes around every visit as a run does,
  // in 50 s instead of 86 s here.
  const auto run = run_command(aisp::testing::aisp_binary() + " bench verify --python " + source("tests/python/hidden_state_pairs.py") +
                               " --history none --quiet --artifacts-dir " + dir);
  const auto results = json::parse(aisp::testing::read_file(dir + "/results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object()) << run.output;
  std::map<std::string, json> pairs;
  for (const auto& p : results["pairs"]) pairs[p.value("target", "")] = p;
  const auto pair_of = [&](const std::string& target) {
    EXPECT_TRUE(pairs.contains(target)) << target << " was not judged: " << run.output;
    return pairs.contains(target) ? pairs[target] : json{{"checks", json::array()}};
  };
  for (const auto* target :
       {"py_state:probes_spoofed", "py_state:onednn_off_inside_each_call", "py_state:baseline_rebinds_gelu",
        "py_state:threshold_just_above_the_probe", "py_state:baseline_perturbs_allocations", "py_state:baseline_sets_the_cpu_capability",
        "py_state:baseline_enters_a_function_mode", "py_state:both_without_onednn", "py_state:baseline_leaves_the_profiler_on",
        "py_state:baseline_widens_the_default_dtype", "py_state:baseline_traces_allocations",
        "py_state:baseline_keeps_the_jit_profiling", "py_state:baseline_traces_from_c", "py_state:baseline_profiles_from_c",
        "py_state:baseline_replaces_a_kernel"}) {
    const auto pair = pair_of(target);
    EXPECT_TRUE(has(failed_checks(pair, "baseline"), "worker-state")) << target << ": " << pair.at("checks").dump(1);
    EXPECT_FALSE(has(failed_checks(pair, "optimized"), "worker-state")) << target << ": " << pair.at("checks").dump(1);
  }
  // sys.monitoring is Python 3.12's (the device's interpreter); the pair is declared only there.
  if (pairs.contains("py_state:baseline_monitors_its_calls")) {
    const auto monitored = pairs["py_state:baseline_monitors_its_calls"];
    EXPECT_TRUE(has(failed_checks(monitored, "baseline"), "worker-state")) << monitored.at("checks").dump(1);
    EXPECT_FALSE(has(failed_checks(monitored, "optimized"), "worker-state")) << monitored.at("checks").dump(1);
  }
  // Note [sampled worker]: a perf event opened by the baseline is refused by the sandbox.
  const auto sampled = pair_of("py_state:baseline_samples_itself");
  EXPECT_TRUE(has(failed_checks(sampled, "baseline"), "sandbox")) << sampled.at("checks").dump(1);
  EXPECT_FALSE(has(failed_checks(sampled, "optimized"), "sandbox")) << sampled.at("checks").dump(1);
  // Declared (p.switches_in_calls(reason)): the same baseline is not judged on it, and the reason is kept.
  const auto declared = pair_of("py_state:declared_switch_in_calls");
  EXPECT_FALSE(has(failed_checks(declared, "baseline"), "worker-state")) << declared.at("checks").dump(1);
  EXPECT_NE(declared.at("checks").dump().find("as the pair declares: the baseline is the native convolution"), std::string::npos);
  // Note [thread placement]: a thread of the baseline's worker pinned to one CPU.
  const auto pinned = pair_of("py_state:baseline_pins_a_thread");
  EXPECT_TRUE(has(failed_checks(pinned, "baseline"), "scheduling-change")) << pinned.at("checks").dump(1);
  EXPECT_FALSE(has(failed_checks(pinned, "optimized"), "scheduling-change")) << pinned.at("checks").dump(1);
  // Note [library state]: oneDNN's instruction set is fixed by the worker's first reading.
  const auto capped = pair_of("py_state:baseline_caps_onednn_isa");
  EXPECT_EQ(capped.dump().find("oneDNN took the instruction-set cap"), std::string::npos) << capped.dump(1).substr(0, 2000);
  EXPECT_NE(capped.value("status", ""), "error") << capped.dump(1).substr(0, 2000);
  // A baseline that quiets the collector (gc.disable, higher thresholds) only speeds itself up.
  const auto quiet = pair_of("py_state:baseline_quiets_the_collector");
  EXPECT_FALSE(has(failed_checks(quiet, "baseline"), "worker-state")) << quiet.at("checks").dump(1);
  std::filesystem::remove_all(dir);
}

TEST(python_cheats, a_baseline_on_fewer_threads_than_declared_fails_threads_used) {
  // A second of sampling: at half a second the candidate's helper once read 0.14 of 76 ms of
  // timed spans against the 0.15 it needs, the suite loading the 2-core machine (2026-12-05).
  const auto judged_pair = judge("tests/python/threaded_pairs.py", "py_threads:baseline_on_one_thread", "", "--max-time 1");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  const auto failed = failed_checks(judged_pair.pair, "baseline");
  EXPECT_EQ(std::count(failed.begin(), failed.end(), "threads-used"), 1) << judged_pair.pair.at("checks").dump(1);
  const auto candidate = failed_checks(judged_pair.pair, "optimized");
  EXPECT_EQ(std::count(candidate.begin(), candidate.end(), "threads-used"), 0) << judged_pair.pair.at("checks").dump(1);
}

// `bench audit --python FILE` audits the file's pairs, as `bench run --python FILE` runs them
// (it once wanted --targets too: a user's walkthrough, 2026-12-04).
TEST(python_pairs, audit_without_targets_audits_the_files_pairs) {
  const auto audited = run_command(aisp::testing::aisp_binary() + " bench audit --json --python " + source("examples/python/host_pairs.py"), false);
  const auto report = nlohmann::json::parse(audited.output, nullptr, false);
  ASSERT_TRUE(report.is_array() && !report.empty()) << audited.output;
  for (const auto& entry : report) EXPECT_TRUE(entry.value("target", "").starts_with("mine:")) << entry.dump();
}

TEST(python_pairs, list_targets_shows_the_pair_files_pairs) {
  const auto listed = run_command(aisp::testing::aisp_binary() + " bench list-targets --python " +
                                  source("examples/python/host_pairs.py") + " --python " + source("tests/python/cheating_pairs.py"));
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  for (const auto* target : {"mine:gelu_affine", "py_cheat:cached_output", "py_cheat:skips_the_work"})
    EXPECT_NE(listed.output.find(target), std::string::npos) << target << "\n" << listed.output;
  // Only the files' pairs, as `bench run --python` judges only theirs; --chapter lists a lab's.
  EXPECT_EQ(listed.output.find("labs/host:"), std::string::npos) << listed.output;
  const auto lab = run_command(aisp::testing::aisp_binary() + " bench list-targets --chapter labs/host --python " +
                               source("examples/python/host_pairs.py"));
  EXPECT_NE(lab.output.find("labs/host:"), std::string::npos) << lab.output;
}

TEST(python_cheats, a_cached_output_is_caught_as_in_the_lab) {
  const auto judged_pair = judge("tests/python/cheating_pairs.py", "py_cheat:cached_output");
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("status", ""), "fail") << judged_pair.run.output;
  const auto failed = failed_checks(judged_pair.pair, "optimized");
  const bool caught = std::any_of(failed.begin(), failed.end(), [](const std::string& name) {
    return name == "timed-call" || name == "baseline-match" || name == "fresh-after-warmup";
  });
  EXPECT_TRUE(caught) << judged_pair.pair.value("checks", json::array()).dump(1);
  EXPECT_TRUE(failed_checks(judged_pair.pair, "baseline").empty()) << judged_pair.pair.value("checks", json::array()).dump(1);
}

TEST(python_cheats, a_variant_that_skips_the_work_is_caught) {
  const auto judged_pair = judge("tests/python/cheating_pairs.py", "py_cheat:skips_the_work");
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  EXPECT_FALSE(failed_checks(judged_pair.pair, "optimized").empty()) << judged_pair.run.output;
  EXPECT_TRUE(failed_checks(judged_pair.pair, "baseline").empty()) << judged_pair.pair.value("checks", json::array()).dump(1);
}

// Note [compilers in the sandbox]: a pair that allowed processes may run a compiler to its end;
// one that did not is refused by the sandbox; a process left alive is caught with L5.
TEST(python_pairs, a_pair_that_allows_processes_may_run_a_compiler_in_setup) {
  const auto judged_pair = judge("tests/python/subprocess_pairs.py", "py_spawn:compiler_in_setup");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("status", ""), "pass") << judged_pair.pair.value("checks", json::array()).dump(1);
  EXPECT_NE(judged_pair.pair.dump().find("its workers may start processes: the optimized variant compiles"), std::string::npos)
      << "the allowance and its reason are in the results";
}

TEST(python_cheats, a_process_without_the_allowance_is_refused) {
  const auto judged_pair = judge("tests/python/subprocess_pairs.py", "py_spawn:undeclared");
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  EXPECT_NE(judged_pair.pair.dump().find("sandbox"), std::string::npos) << judged_pair.pair.dump(1).substr(0, 3000);
}

TEST(python_cheats, a_process_left_alive_is_caught_even_when_allowed) {
  const auto judged_pair = judge("tests/python/subprocess_pairs.py", "py_spawn:helper_outlives_run");
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  const auto failed = failed_checks(judged_pair.pair, "optimized");
  EXPECT_NE(std::find(failed.begin(), failed.end(), "child-process"), failed.end()) << judged_pair.pair.value("checks", json::array()).dump(1);
  EXPECT_TRUE(failed_checks(judged_pair.pair, "baseline").empty()) << judged_pair.pair.value("checks", json::array()).dump(1);
}

TEST(python_errors, a_variant_that_raises_fails_with_its_message) {
  const auto judged_pair = judge("tests/python/raising_pairs.py", "py_errors:raises");
  EXPECT_EQ(judged_pair.run.exit_code, 1) << judged_pair.run.output;
  EXPECT_NE(judged_pair.pair.dump().find("optimized variant gave up"), std::string::npos) << judged_pair.pair.dump(1);
}

// Note [goals]: a latency pair's verdict is on the p99, and each variant reports p50 and p99.
TEST(python_pairs, a_latency_pair_is_judged_on_its_p99) {
  const auto judged_pair = judge("tests/python/latency_pairs.py", "py_goal:tail_latency", "", "--max-time 3");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("goal", ""), "latency");
  EXPECT_EQ(judged_pair.pair.value("verdict_statistic", ""), "p99");
  for (const auto& variant : judged_pair.pair.at("variants")) {
    EXPECT_GE(variant.value("sample_count", 0), 100) << variant.value("name", "");
    EXPECT_TRUE(variant.at("goal_metrics").contains("p99_s")) << variant.dump().substr(0, 400);
  }
  const auto& speedup = judged_pair.pair.at("speedups").at(0);
  // The slow path takes many times the fast one: the p99 ratio is well above the median's 1.
  EXPECT_GT(speedup.at("speedup").value("point", 0.0), 2.0) << speedup.dump();
  const auto& baseline = judged_pair.pair.at("variants").at(0).at("goal_metrics");
  EXPECT_GT(baseline.at("p99_s").value("point", 0.0), 2 * baseline.at("p50_s").value("point", 0.0)) << baseline.dump();
}

// `aisp new pair --python` writes a pair file that passes `bench verify` as written.
TEST(python_pairs, the_new_pair_skeleton_passes_verify_as_written) {
  const auto folder = (std::filesystem::temp_directory_path() / ("aisp_new_python_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(folder);
  const auto made = run_command(aisp::testing::aisp_binary() + " new pair mine:twice --python --dir " + folder);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto verified = run_command(aisp::testing::aisp_binary() + " bench verify --python " + folder +
                                    "/twice.py --history none --quiet --artifacts-dir " + folder + "/run");
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  const auto again = run_command(aisp::testing::aisp_binary() + " new pair mine:twice --python --dir " + folder);
  EXPECT_EQ(again.exit_code, 2) << again.output;  // never overwrites
  std::filesystem::remove_all(folder);
}

using aisp::testing::expect_one_line_error;

TEST(python_errors, each_is_one_line_with_exit_code_2) {
  expect_one_line_error("bench list-targets --python /nonexistent/pairs.py", "no pair file /nonexistent/pairs.py");
  expect_one_line_error("bench list-targets --python " + source("README.md"), "is not a Python file: a pair file is a .py module");
  // The exception, and the file and line that raised it.
  expect_one_line_error("bench list-targets --python " + source("tests/python/broken_pairs.py"), "broken_pairs.py:4");
  expect_one_line_error("bench list-targets --python " + source("tests/python/broken_pairs.py"), "broken on purpose");
  // The benchmark contract holds for Python pairs too, and the message names the pair file.
  expect_one_line_error("bench list-targets --python " + source("tests/python/no_held_out_pairs.py"), "no_held_out_pairs.py: ");
  expect_one_line_error("bench list-targets --python " + source("tests/python/no_held_out_pairs.py"), "held-out size");
  // A buffer's dim that names no size is refused at load, before any pair runs.
  expect_one_line_error("bench run --history none --python " + source("tests/python/bad_dim_pairs.py"),
                        "buffer y names dim 'm' that the benchmark size (n=1024) does not give");
  // A file with no aisp.pair(...) declares nothing to judge.
  expect_one_line_error("bench list-targets --python " + source("python/aisp/__init__.py"), "declares no pair");
  // Note [plugin load probe]: a pair file that ends or crashes the process while imported.
  expect_one_line_error("bench list-targets --python " + source("tests/python/exiting_pairs.py"), "ended the process while loading (exit 3)");
  expect_one_line_error("bench run --history none --python " + source("tests/python/crashing_pairs.py"), "crashing_pairs.py crashed while loading");
  expect_one_line_error("bench list-targets --python " + source("examples/python/host_pairs.py"), "did not run",
                        "AISP_PYTHON=/bin/false");
}

}  // namespace
