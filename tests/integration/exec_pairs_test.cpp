// Executable pairs through --exec (issue 20, Note [executable pairs]): the tutorial's pair, whose
// variants and reference are a Python program speaking the executable protocol, is judged with
// every check and passes; the planted cheats (a cached output, a reply before the work, work
// done before the clock) are caught as in the lab; a bad pair file or a variant that will not start is a one-line error.
// The fixtures need numpy under the interpreter `{python}` names (/usr/bin/python3 with Debian's
// python3-numpy, which python3-torch brings).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <thread>

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

judged judge(const std::string& file, const std::string& target) {
  // The baseline loop takes ~60 ms a call: 0.5 s left it too few samples for a verdict in CI.
  return aisp::testing::judge_through("--exec", file, target, "run --max-time 2");
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(exec_pairs, the_tutorial_pair_is_judged_faster_with_every_check_passing) {
  const auto judged_pair = judge("examples/exec/affine_pairs.json", "mine:affine_exec");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  EXPECT_EQ(judged_pair.pair.value("status", ""), "pass") << judged_pair.pair.dump(1).substr(0, 4000);
  for (const auto* variant : {"baseline", "optimized", "baseline_twin"})
    EXPECT_TRUE(failed_checks(judged_pair.pair, variant).empty()) << variant << ": " << judged_pair.pair.at("checks").dump(1);
  // A Python loop against numpy over 20000 floats: not close.
  bool faster = false;
  for (const auto& speedup : judged_pair.pair.value("speedups", json::array()))
    faster = faster || speedup.value("verdict", "") == "faster";
  EXPECT_TRUE(faster) << "speedups: " << judged_pair.pair.value("speedups", json::array()).dump();
}

// A planted exec cheat fails its pair through every one of `checks` on the optimized variant,
// and the honest baseline fails none.
void expect_caught(const std::string& target, std::initializer_list<const char*> checks) {
  const auto judged_pair = judge("tests/exec/cheating_pairs.json", target);
  EXPECT_EQ(judged_pair.pair.value("status", ""), "fail") << judged_pair.run.output;
  const auto failed = failed_checks(judged_pair.pair, "optimized");
  for (const auto* check : checks) EXPECT_TRUE(has(failed, check)) << check << ": " << judged_pair.pair.value("checks", json()).dump(1);
  EXPECT_TRUE(failed_checks(judged_pair.pair, "baseline").empty()) << judged_pair.pair.value("checks", json()).dump(1);
}

// A variant program that never answers: its worker times out and is killed, and the program
// goes with it (it outlived the worker as an orphan, a user's walkthrough, 2026-12-04).
TEST(exec_pairs, a_program_that_never_answers_does_not_outlive_its_worker) {
  const auto run = run_command(aisp::testing::aisp_binary() + " bench run --exec " + source("tests/exec/hanging_pairs.json") +
                               " --worker-timeout 3 --max-time 0.2 --history none --quiet --artifacts-dir " +
                               (std::filesystem::temp_directory_path() / ("aisp_exec_hang_" + std::to_string(::getpid()))).string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("timeout"), std::string::npos) << run.output;
  const auto left = run_command("pgrep -f 'aisp-orphan-prob[e]'", false);
  EXPECT_NE(left.exit_code, 0) << "still running: " << left.output;
  (void)run_command("pkill -f 'aisp-orphan-prob[e]'", false);
}

TEST(exec_cheats, a_cached_output_is_caught) { expect_caught("exec_cheat:cached_output", {"fresh-after-warmup", "timed-call"}); }

TEST(exec_cheats, a_reply_before_the_work_is_caught_as_a_late_write) { expect_caught("exec_cheat:replies_before_the_work", {"late-write"}); }

// Note [work before the window] (host_sampler.cpp): a thread of the variant process computes y
// from the fresh inputs while the judge flushes the caches, before the window opens; its CPU
// there (and its polling between requests) is the worker's children's, and worker-cpu fails it.
TEST(exec_cheats, work_done_before_the_clock_is_caught) { expect_caught("exec_cheat:computes_before_the_clock", {"worker-cpu"}); }

// The same helper as a process six levels below the program, past the four levels the walk of
// the worker's descendants once read (red team six, 2026-12-04: 5.5x with every check passing).
TEST(exec_cheats, work_done_before_the_clock_six_processes_down_is_caught) {
  expect_caught("exec_cheat:computes_six_levels_down", {"worker-cpu"});
  // The chain does not outlive its worker: it is in the worker's process group.
  const auto left = run_command("pgrep -f 'cheating_server.py dee[p]'", false);
  EXPECT_NE(left.exit_code, 0) << "still running: " << left.output;
  (void)run_command("pkill -f 'cheating_server.py dee[p]'", false);
}

// Note [children's priority]: the program reniced itself; E3 reads its nice value beside the worker's.
TEST(exec_cheats, a_program_that_renices_itself_is_caught) { expect_caught("exec_cheat:renices_itself", {"priority-change"}); }

// Note [thread placement]: the program put itself under SCHED_IDLE; its threads' policy is read beside their CPUs.
TEST(exec_cheats, a_program_under_another_scheduling_policy_is_caught) {
  expect_caught("exec_cheat:idles_itself", {"scheduling-change"});
}

// Note [executable pair threads]: under a pair declaring 2 threads, a baseline program that runs
// on one fails threads-used (its program's threads beside the busiest did nothing); the same
// baseline declaring its one thread, and the candidate's two halves, pass it.
// numpy over 4M floats takes ~10 ms a call: half a second of sampling is enough to judge threads.
judged judge_threads(const std::string& target) {
  return aisp::testing::judge_through("--exec", "tests/exec/thread_pairs.json", target, "run --max-time 0.5");
}

// thread_pairs.json's `target` judged: `culprit` fails `check`, and the other variant does not.
void expect_only_one_fails(const std::string& target, const std::string& check, const std::string& culprit = "baseline") {
  const auto judged_pair = judge_threads(target);
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  const std::string other = culprit == "baseline" ? "optimized" : "baseline";
  EXPECT_TRUE(has(failed_checks(judged_pair.pair, culprit), check)) << target << ": " << judged_pair.pair.value("checks", json()).dump(1);
  EXPECT_FALSE(has(failed_checks(judged_pair.pair, other), check)) << target << ": " << judged_pair.pair.value("checks", json()).dump(1);
}

TEST(exec_cheats, a_baseline_program_on_fewer_threads_than_declared_is_caught) {
  expect_only_one_fails("exec_cheat:baseline_on_one_thread", "threads-used");
}

TEST(exec_pairs, a_serial_baseline_declaring_its_one_thread_passes_threads_used) {
  const auto judged_pair = judge_threads("exec_threads:serial_baseline_declared");
  ASSERT_TRUE(judged_pair.pair.is_object()) << judged_pair.run.output;
  for (const auto* variant : {"baseline", "optimized", "baseline_twin"})
    EXPECT_FALSE(has(failed_checks(judged_pair.pair, variant), "threads-used")) << variant << ": " << judged_pair.pair.value("checks", json()).dump(1);
}

// Red team nine (2026-12-05): a candidate program that gives part of each call to a helper thread
// under a one-thread pair (1.21-1.38x) fails worker-cpu (Note [executable pair threads]); a
// baseline program started through `env` with numpy's vector instructions disabled (1.88x) fails
// worker-state (Note [worker environment]).
TEST(exec_cheats, an_undeclared_helper_thread_and_a_baseline_environment_are_caught) {
  expect_only_one_fails("exec_cheat:candidate_splits_under_one_thread", "worker-cpu", "optimized");
  expect_only_one_fails("exec_cheat:baseline_under_its_own_environment", "worker-state");
}

// Note [live program environment]: red team eleven's baseline program set NPY_DISABLE_CPU_FEATURES
// itself, before importing numpy (17.7x): its environment is read from its memory.
TEST(exec_cheats, a_baseline_program_that_sets_a_knob_itself_fails_worker_state) {
  expect_only_one_fails("exec_cheat:baseline_quiets_numpy_itself", "worker-state");
}

// Note [thread placement]: red team twelve's baseline program ran under `taskset -c 0` while its
// candidate had the worker's CPUs (1.96x for the same program).
TEST(exec_cheats, a_baseline_program_pinned_to_one_cpu_fails_scheduling_change) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: a mask of CPU 0 is the worker's own";
  expect_only_one_fails("exec_cheat:baseline_under_taskset", "scheduling-change");
}

// Note [confined programs]: red team ten's baseline program armed a 4 ms CPU-time timer whose
// handler burned 2 ms of it (2.05-2.12x): the program's own filter ends it at setitimer, and the
// pair fails saying the sandbox stopped it.
TEST(exec_cheats, a_program_that_arms_a_timer_is_stopped_by_the_sandbox) {
  const auto taxed = judge_threads("exec_cheat:baseline_taxed_by_its_own_timer");
  ASSERT_TRUE(taxed.pair.is_object()) << taxed.run.output;
  EXPECT_EQ(taxed.pair.value("status", ""), "fail") << taxed.pair.dump(1).substr(0, 2000);
  EXPECT_NE(taxed.pair.dump().find("SIGSYS: the sandbox stopped a forbidden system call"), std::string::npos)
      << taxed.pair.value("message", "") << "\n" << taxed.run.output;
}

// Note [program page faults]: the program's faults across the timed span are the worker's (M6).
TEST(exec_cheats, a_program_that_drops_its_pages_of_the_buffers_fails_page_faults) {
  expect_only_one_fails("exec_cheat:baseline_refaults_its_buffers", "page-faults");
}

TEST(exec_pairs, a_bad_pair_file_is_one_line_and_exit_2) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_exec_bad_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string cases[] = {
      write("version.json", R"({"protocol": 2, "pairs": []})"),
      write("malformed.json", R"({"protocol": 1, "pairs": [)"),
      write("pairs_not_a_list.json", R"({"protocol": 1, "pairs": 5})"),
      write("not_an_object.json", R"([1, 2])"),
      write("no_reference.json", R"({"protocol": 1, "pairs": [{"target": "x:y", "sizes": {"benchmark": {"n": 4}, "validation": [{"n": 1}]},
        "buffers": [{"name": "x", "role": "input", "dtype": "f32", "dims": ["n"]}], "work": {"bytes": [[4, "n"]]}, "variants": []}]})"),
      (dir / "missing.json").string(),
  };
  for (const auto& file : cases) aisp::testing::expect_one_line_error("bench list-targets --exec " + file, "--exec");
  std::filesystem::remove_all(dir);
}

// Note [declared fields]: a field of the wrong kind names itself and what it should be.
TEST(exec_pairs, a_wrong_field_is_named_with_what_it_should_be) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_exec_fields_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto pair_file = [&](const std::string& name, const std::string& sizes, const std::string& buffer_init, const std::string& work) {
    const auto path = (dir / name).string();
    std::ofstream(path) << R"({"protocol": 1, "pairs": [{"target": "mine:scale", "sizes": {"benchmark": )" << sizes
                        << R"(, "validation": [{"n": 1}]}, "buffers": [{"name": "x", "role": "input", "dtype": "f32", "dims": ["n"])"
                        << buffer_init << R"(}], "work": {"bytes": )" << work
                        << R"(}, "reference": ["./ref"], "variants": [{"name": "baseline", "command": ["./v"]}]}]})";
    return path;
  };
  const std::pair<std::string, std::string> cases[] = {
      {pair_file("huge.json", R"({"n": 1e30})", "", R"([[4, "n"]])"),
       "pairs[0] (mine:scale): sizes.benchmark.n must be a whole number from 0 to 2^62, not 1e+30"},
      {pair_file("negative.json", R"({"n": -8})", "", R"([[4, "n"]])"), "sizes.benchmark.n must be a whole number from 0 to 2^62, not -8"},
      {pair_file("term.json", R"({"n": 8})", "", R"([["four", "n"]])"), "work.bytes[0] must be a list of a coefficient and size names"},
      {pair_file("dim.json", R"({"n": 8})", "", R"([[4, "m"]])"), "work.bytes[0][1] must be a size of sizes.benchmark, not \"m\""},
      {pair_file("init.json", R"({"n": 8})", R"(, "init": "gaussian")", R"([[4, "n"]])"),
       "buffers[0].init must be one of index_permutation, small_integers, uniform_signed, uniform_unit, not \"gaussian\""},
      // A misspelt field was ignored and a buffer's dim naming no size ended the run at its turn
      // (a user's walkthrough, 2026-12-04): both are refused at load.
      {pair_file("misspelt.json", R"({"n": 8})", R"(, "dtpye": "f16")", R"([[4, "n"]])"),
       "buffers[0] has an unknown field \"dtpye\"; did you mean \"dtype\"?"},
      {pair_file("zero.json", R"({"n": 0})", "", R"([[4, "n"]])"), "buffer x has 0 elements at the benchmark size (n=0)"},
  };
  for (const auto& [file, says] : cases) aisp::testing::expect_one_line_error("bench list-targets --exec " + file, says);
  std::filesystem::remove_all(dir);
}

TEST(exec_pairs, a_variant_that_does_not_start_fails_its_pair_with_why) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_exec_nostart_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto text = aisp::testing::read_file(source("examples/exec/affine_pairs.json"));
  text.replace(text.find("\"affine_server.py\", \"numpy\""), 27, "\"no_such_server.py\", \"numpy\"");
  std::filesystem::copy_file(source("examples/exec/affine_server.py"), dir / "affine_server.py");
  std::ofstream(dir / "pairs.json") << text;
  const auto run = run_command(aisp::testing::aisp_binary() + " bench verify --exec " + (dir / "pairs.json").string() +
                               " --history none --artifacts-dir " + (dir / "out").string());
  EXPECT_NE(run.output.find("without a reply"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("terminate called"), std::string::npos) << run.output;
  std::filesystem::remove_all(dir);
}

// A variant killed by a signal is named with the signal; SIGSYS says that the sandbox stopped it.
TEST(exec_pairs, a_variant_killed_by_a_signal_is_named_with_it) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_exec_signal_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto text = aisp::testing::read_file(source("examples/exec/affine_pairs.json"));
  const std::string numpy = "[\"{python}\", \"affine_server.py\", \"numpy\"]";
  ASSERT_NE(text.find(numpy), std::string::npos);
  text.replace(text.find(numpy), numpy.size(), "[\"sh\", \"-c\", \"kill -ABRT $$; sleep 5\"]");
  std::filesystem::copy_file(source("examples/exec/affine_server.py"), dir / "affine_server.py");
  std::ofstream(dir / "pairs.json") << text;
  const auto run = run_command(aisp::testing::aisp_binary() + " bench verify --exec " + (dir / "pairs.json").string() +
                               " --history none --artifacts-dir " + (dir / "out").string());
  EXPECT_NE(run.exit_code, 0) << run.output;
  const bool named = run.output.find("it ended (signal 6, Aborted)") != std::string::npos ||
                     run.output.find("it ended (signal 31, SIGSYS: the sandbox stopped a forbidden system call)") != std::string::npos;
  EXPECT_TRUE(named) << run.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
