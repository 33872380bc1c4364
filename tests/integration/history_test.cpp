// The results history end to end through the aisp binary, on the host pairs: two recorded runs,
// history, compare-runs, expectations (update, then met), reports in every format, merge, bad
// input, and a run killed with SIGKILL mid-suite that keeps the pairs it finished.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "../test_support.hpp"
#include "history/history_store.hpp"
#include "history/run_comparison.hpp"
#include "history/sqlite_db.hpp"
#include "one_line_error.hpp"

extern char** environ;

namespace {

using aisp::testing::run_command;
using nlohmann::json;

std::string fresh(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_history_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string aisp() { return aisp::testing::aisp_binary(); }

std::string run_args(const std::string& dir, const std::string& name) {
  return " bench run --targets labs/host --max-time 3 --min-time 0.2 --quiet --golden-file " + std::string(AISP_SOURCE_DIR) +
         "/expectations/goldens.json --artifacts-dir " + dir + "/" + name + " --history " + dir + "/aisp.db";
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}


class history_pipeline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The expectations need a first run whose speedups are all `faster`: taken again, in a fresh
    // history, while the CI machine is too noisy for a verdict (all_speedups_faster).
    for (int attempt = 0; attempt < 3; ++attempt) {
      dir_ = fresh("pipeline");
      first_ = run_command(aisp() + run_args(dir_, "run1"));
      if (first_.exit_code == 0 && aisp::testing::all_speedups_faster(dir_ + "/run1/results.json")) break;
    }
    update_ = run_command(aisp() + " bench expectations --hardware host --file " + dir_ + "/host.json --update --min-speedup 1.0 --run " +
                          dir_ + "/run1");
    second_ = run_command(aisp() + run_args(dir_, "run2") + " --expectations " + dir_ + "/host.json");
  }
  static std::string dir_;
  static aisp::testing::command_result first_, update_, second_;
};
std::string history_pipeline::dir_;
aisp::testing::command_result history_pipeline::first_, history_pipeline::update_, history_pipeline::second_;

TEST_F(history_pipeline, records_both_runs_with_their_pairs) {
  ASSERT_EQ(first_.exit_code, 0) << first_.output;
  ASSERT_EQ(second_.exit_code, 0) << second_.output;
  const auto listed = run_command(aisp() + " bench history --json --db " + dir_ + "/aisp.db", false);
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto runs = json::parse(listed.output);
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r["state"], "complete");
    EXPECT_EQ(r["pairs"], 2);
    EXPECT_EQ(r["hardware"], "host");
  }
  const auto one = json::parse(run_command(aisp() + " bench history --json --target labs/host:transpose --db " + dir_ + "/aisp.db", false).output);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_FALSE(one[0]["speedups"].empty());  // the results API's list_runs, as MCP and serve answer
}

TEST_F(history_pipeline, compares_runs_on_the_stored_samples) {
  const auto compared = run_command(aisp() + " bench compare-runs 1 2 --json --db " + dir_ + "/aisp.db", false);
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto c = json::parse(compared.output);
  EXPECT_TRUE(c["warnings"].empty()) << c["warnings"].dump();
  ASSERT_EQ(c["changes"].size(), 4u);  // 2 pairs x (baseline, optimized)
  for (const auto& change : c["changes"]) {
    EXPECT_TRUE(std::set<std::string>({"faster", "slower", "unchanged"}).count(change["verdict"].get<std::string>()));
    EXPECT_LE(change["time_ratio_b_over_a"]["low"].get<double>(), change["time_ratio_b_over_a"]["high"].get<double>());
  }
  const auto unknown = run_command(aisp() + " bench compare-runs 1 99 --db " + dir_ + "/aisp.db");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.output.find("unknown run id 99"), std::string::npos) << unknown.output;
}

TEST_F(history_pipeline, expectations_are_written_then_met_and_later_runs_are_marked) {
  ASSERT_EQ(update_.exit_code, 0) << update_.output;
  const auto expectations = read_json(dir_ + "/host.json");
  EXPECT_EQ(expectations["hardware"], "host");
  ASSERT_EQ(expectations["entries"].size(), 2u);
  const auto& entry = expectations["entries"]["labs/host:transpose"]["optimized"];
  EXPECT_GT(entry["provenance"]["samples"].get<int>(), 0);
  EXPECT_FALSE(entry["provenance"]["date"].get<std::string>().empty());
  const auto check = run_command(aisp() + " bench expectations --hardware host --check --file " + dir_ + "/host.json --run " + dir_ + "/run1");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("labs/host:transpose optimized: met"), std::string::npos) << check.output;
  for (const auto& pair : read_json(dir_ + "/run2/results.json")["pairs"]) {
    for (const auto& s : pair["speedups"]) {
      EXPECT_TRUE(std::set<std::string>({"met", "regressed", "improved"}).count(s["expectation"].get<std::string>())) << s.dump();
    }
  }
}

// Note [tail expectations], through the CLI: run1 as if its transpose had recorded a TPOT tail
// (a serving pair's goal_metrics.recorded), written into expectations, then the same run with the
// tail stretched: --check exits 1 and names the metric, though every speedup is the same.
TEST_F(history_pipeline, a_stretched_latency_tail_fails_the_expectation_check) {
  ASSERT_EQ(first_.exit_code, 0) << first_.output;
  auto results = read_json(dir_ + "/run1/results.json");
  const auto with_tail = [&](double low, double high) {
    auto copy = results;
    for (auto& pair : copy["pairs"]) {
      for (auto& v : pair["variants"]) {
        if (v["name"] != "optimized") continue;
        v["goal_metrics"]["recorded"]["tpot_s"]["p99_ratio"] = {{"point", (low + high) / 2}, {"low", low}, {"high", high}};
      }
    }
    return copy;
  };
  const auto write_run = [&](const std::string& name, const json& run) {
    std::filesystem::create_directories(dir_ + "/" + name);
    std::ofstream(dir_ + "/" + name + "/results.json") << run.dump();
  };
  write_run("tail_recorded", with_tail(0.95, 1.05));
  write_run("tail_stretched", with_tail(0.60, 0.65));
  const auto file = dir_ + "/tails.json";
  const auto update = run_command(aisp() + " bench expectations --hardware host --file " + file + " --update --min-speedup 1.0 --run " +
                                  dir_ + "/tail_recorded");
  ASSERT_EQ(update.exit_code, 0) << update.output;
  EXPECT_DOUBLE_EQ(read_json(file)["entries"]["labs/host:transpose"]["optimized"]["tail_ratios"]["tpot_s"]["low"].get<double>(), 0.95);
  const auto same = run_command(aisp() + " bench expectations --hardware host --check --file " + file + " --run " + dir_ + "/tail_recorded");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const auto stretched =
      run_command(aisp() + " bench expectations --hardware host --check --file " + file + " --run " + dir_ + "/tail_stretched");
  EXPECT_EQ(stretched.exit_code, 1) << stretched.output;
  EXPECT_NE(stretched.output.find("labs/host:transpose optimized: regressed tpot_s p99"), std::string::npos) << stretched.output;
}

// A CI gate on --check: an invalid run's speedups are not held to the file (they read "met"
// before), and a run of another card is refused, as --update refuses it.
TEST_F(history_pipeline, check_fails_an_invalid_run_and_refuses_another_cards) {
  ASSERT_EQ(update_.exit_code, 0) << update_.output;
  auto results = read_json(dir_ + "/run1/results.json");
  for (auto& pair : results["pairs"]) {
    pair["status"] = "fail";
    pair["message"] = "baseline sample-count: 8 samples";
  }
  std::filesystem::create_directories(dir_ + "/invalid_run");
  std::ofstream(dir_ + "/invalid_run/results.json") << results.dump();
  const auto invalid =
      run_command(aisp() + " bench expectations --hardware host --check --file " + dir_ + "/host.json --run " + dir_ + "/invalid_run");
  EXPECT_EQ(invalid.exit_code, 1) << invalid.output;
  EXPECT_NE(invalid.output.find("labs/host:transpose: not checked: the pair's status is fail"), std::string::npos) << invalid.output;
  const auto other_card =
      run_command(aisp() + " bench expectations --hardware h100 --check --file " + dir_ + "/none_yet.json --run " + dir_ + "/run1");
  EXPECT_EQ(other_card.exit_code, 2) << other_card.output;
  EXPECT_NE(other_card.output.find("measured on host, not h100"), std::string::npos) << other_card.output;
}

TEST_F(history_pipeline, reports_in_every_format) {
  const auto results = read_json(dir_ + "/run2/results.json");
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/run2/report.md")) << "bench run leaves a Markdown report beside results.json";
  const auto md = run_command(aisp() + " bench report --format md --run " + dir_ + "/run2", false);
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_NE(md.output.find("| labs/host:transpose | optimized |"), std::string::npos) << md.output;
  const auto csv = run_command(aisp() + " bench report --format csv --run " + dir_ + "/run2", false);
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 5);  // header + 2 pairs x 2 variants
  const auto as_json = run_command(aisp() + " bench report --format json --run " + dir_ + "/run2", false);
  EXPECT_EQ(json::parse(as_json.output), results);
  ASSERT_EQ(run_command(aisp() + " bench report --format html --output " + dir_ + "/r.html --run " + dir_ + "/run2").exit_code, 0);
  std::ifstream in(dir_ + "/r.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  for (const char* tag : {"html", "body", "table", "svg", "script", "h2"}) {
    EXPECT_EQ(count(std::string("<") + tag), count(std::string("</") + tag + ">")) << tag;
  }
  const auto start = html.find("id=\"aisp-results\">") + std::string("id=\"aisp-results\">").size();
  std::string data = html.substr(start, html.find("</script>", start) - start);
  for (auto at = data.find("<\\/"); at != std::string::npos; at = data.find("<\\/", at)) data.replace(at, 3, "</");
  EXPECT_EQ(json::parse(data), results);
}

// Two runs' folders compare as two run ids do, without a history of the user's (Note: a history
// of the command's own, removed when it ends).
TEST_F(history_pipeline, compares_two_runs_folders_directly) {
  const auto by_folders = run_command(aisp() + " bench compare-runs " + dir_ + "/run1 " + dir_ + "/run2/results.json --json", false);
  ASSERT_EQ(by_folders.exit_code, 0) << by_folders.output;
  const auto by_ids = run_command(aisp() + " bench compare-runs 1 2 --json --db " + dir_ + "/aisp.db", false);
  ASSERT_EQ(by_ids.exit_code, 0) << by_ids.output;
  const auto folders = json::parse(by_folders.output);
  const auto ids = json::parse(by_ids.output);
  ASSERT_EQ(folders["changes"].size(), ids["changes"].size());
  for (std::size_t i = 0; i < ids["changes"].size(); ++i) {
    EXPECT_EQ(folders["changes"][i]["target"], ids["changes"][i]["target"]);
    EXPECT_EQ(folders["changes"][i]["verdict"], ids["changes"][i]["verdict"]);
    EXPECT_EQ(folders["changes"][i]["median_b_s"], ids["changes"][i]["median_b_s"]);
  }
  // The throwaway history's ids mean nothing to the user: the folders are named instead.
  EXPECT_TRUE(folders["run_a"].is_null()) << by_folders.output;
  EXPECT_EQ(folders["folder_a"], dir_ + "/run1");
  EXPECT_EQ(folders["folder_b"], dir_ + "/run2/results.json");
  EXPECT_EQ(ids["run_a"], 1);
  const auto as_text = run_command(aisp() + " bench compare-runs " + dir_ + "/run1 " + dir_ + "/run2", false);
  EXPECT_NE(as_text.output.find("A: " + dir_ + "/run1\n"), std::string::npos) << as_text.output;
  EXPECT_EQ(as_text.output.find("run 1 "), std::string::npos) << as_text.output;
}

TEST_F(history_pipeline, merge_folds_artifacts_in_once) {
  const auto db = dir_ + "/merged.db";
  EXPECT_EQ(run_command(aisp() + " bench merge " + dir_ + "/run1 " + dir_ + "/run2 --db " + db).exit_code, 0);
  EXPECT_EQ(run_command(aisp() + " bench merge " + dir_ + "/run1 --db " + db).exit_code, 0);  // again: no duplicate
  EXPECT_EQ(json::parse(run_command(aisp() + " bench history --json --db " + db, false).output).size(), 2u);
}

TEST(compare_runs_gate, strict_refuses_different_sizes_and_fail_on_slower_gates_a_regression) {
  const auto dir = fresh("gate");
  const auto one = [&](const std::string& name, const std::string& extra) {
    return run_command(aisp() + " bench run --targets labs/host:transpose --max-time 1 --min-time 0.2 --quiet --golden-file " +
                       std::string(AISP_SOURCE_DIR) + "/expectations/goldens.json --artifacts-dir " + dir + "/" + name +
                       " --history " + dir + "/aisp.db" + extra);
  };
  // Small sizes, so each sample is short and the 1 s cap still gives every variant its minimum.
  ASSERT_EQ(one("small", " --size rows=1024 --size cols=2048").exit_code, 0);
  ASSERT_EQ(one("large", " --size rows=2048 --size cols=2048").exit_code, 0);  // twice the work: every variant slower
  const std::string compare = aisp() + " bench compare-runs 1 2 --db " + dir + "/aisp.db";

  const auto lenient = run_command(compare);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find("warning: different benchmark sizes for labs/host:transpose"), std::string::npos) << lenient.output;
  EXPECT_NE(lenient.output.find("slower"), std::string::npos) << lenient.output;

  const auto strict = run_command(compare + " --strict");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_NE(strict.output.find("--strict refused: different benchmark sizes"), std::string::npos) << strict.output;
  EXPECT_EQ(strict.output.find("time B/A"), std::string::npos) << "a refused comparison prints no table";

  const auto gated = run_command(compare + " --fail-on-slower");
  EXPECT_EQ(gated.exit_code, 1) << gated.output;
  const auto reversed = run_command(aisp() + " bench compare-runs 2 1 --fail-on-slower --db " + dir + "/aisp.db");
  EXPECT_EQ(reversed.exit_code, 0) << "the smaller run is faster, not slower: " << reversed.output;
  std::filesystem::remove_all(dir);
}

// Note [launch gate]: a GPU run gated and one not differ by the host's launch latency.
TEST(compare_runs_warnings, gpu_runs_sampled_with_and_without_the_launch_gate_are_named) {
  const auto dir = fresh("gatewarn");
  aisp::history_store history(dir + "/aisp.db");
  const auto results = [&](const char* started, json config) {
    return json{{"started_at", started},
                {"artifacts_dir", dir + "/" + started},
                {"config", std::move(config)},
                {"device", {{"cuda_driver_version", 13000}, {"gpus", json::array({{{"uuid", "GPU-1"}, {"name", "NVIDIA H200"}}})}}},
                {"pairs", json::array()}};
  };
  const auto before = history.ingest(results("2026-12-01T00:00:00Z", {{"mode", "cold"}}));  // no key: not gated
  const auto gated = history.ingest(results("2026-12-02T00:00:00Z", {{"mode", "cold"}, {"launch_gate", true}}));
  const auto again = history.ingest(results("2026-12-03T00:00:00Z", {{"mode", "cold"}, {"launch_gate", true}}));
  const auto differ = aisp::compare_runs(history, before, gated).warnings;
  ASSERT_EQ(differ.size(), 1u);
  EXPECT_NE(differ[0].find("different launch gates: off vs on"), std::string::npos) << differ[0];
  EXPECT_TRUE(aisp::compare_runs(history, gated, again).warnings.empty());
  // Two runs with nothing in common compare nothing: no answer, so not a passed gate.
  const auto disjoint = run_command(aisp() + " bench compare-runs " + std::to_string(gated) + " " + std::to_string(again) +
                                    " --fail-on-slower --db " + dir + "/aisp.db");
  EXPECT_EQ(disjoint.exit_code, 1) << disjoint.output;
  EXPECT_NE(disjoint.output.find("share no target and variant"), std::string::npos) << disjoint.output;
  std::filesystem::remove_all(dir);
}

TEST(history_bad_input, each_gets_a_one_line_error_and_a_nonzero_exit) {
  const auto dir = fresh("bad");
  { std::ofstream(dir + "/corrupt.db") << "this is not a database, only text long enough to be a header........"; }
  // The servers refuse it at start, as the read-only commands do, not at a client's first request.
  { std::ofstream(dir + "/short.txt") << "\n"; }  // shorter than SQLite's header: it was made a database
  for (const std::string command : {"bench history", "mcp", "serve --port 0"}) {
    aisp::testing::expect_one_line_error(command + " --db " + dir + "/corrupt.db", "is unusable");
    aisp::testing::expect_one_line_error(command + " --db " + dir + "/short.txt", "is not an SQLite database");
    EXPECT_EQ(std::filesystem::file_size(dir + "/short.txt"), 1u) << command;
  }
  aisp::testing::expect_one_line_error("mcp --db " + dir, "is not a file");
  std::filesystem::create_directories(dir + "/truncated");
  { std::ofstream(dir + "/truncated/results.json") << R"({"pairs": [{"target": "x")"; }
  const auto truncated = run_command(aisp() + " bench report --run " + dir + "/truncated");
  EXPECT_NE(truncated.exit_code, 0);
  EXPECT_NE(truncated.output.find("not a complete results document"), std::string::npos) << truncated.output;
  std::filesystem::create_directories(dir + "/newer");
  { std::ofstream(dir + "/newer/results.json") << R"({"schema_version": 99, "pairs": []})"; }
  const auto newer = run_command(aisp() + " bench report --run " + dir + "/newer");
  EXPECT_NE(newer.exit_code, 0);
  EXPECT_NE(newer.output.find("its schema_version is 99; this aisp reads 1"), std::string::npos) << newer.output;
  { std::ofstream(dir + "/bad.json") << "[1, 2"; }
  const auto expectations = run_command(aisp() + " bench expectations --hardware host --file " + dir + "/bad.json");
  EXPECT_EQ(expectations.exit_code, 2) << "a bad input, as every other";
  EXPECT_NE(expectations.output.find("malformed"), std::string::npos) << expectations.output;
  // bench run refuses it before the history records a run.
  const auto run = run_command(aisp() + " bench run --targets labs/host:transpose --quiet --expectations " + dir +
                               "/bad.json --artifacts-dir " + dir + "/run --history " + dir + "/aisp.db");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/aisp.db")) << "no run recorded, not even begun";
  // A results document whose measurement is text is refused where it is merged, saying where.
  std::filesystem::create_directories(dir + "/texty");
  { std::ofstream(dir + "/texty/results.json") << R"({"pairs": [{"target": "x", "variants": [{"name": "baseline", "median_s": "1 ms"}]}]})"; }
  const auto merge = run_command(aisp() + " bench merge " + dir + "/texty --db " + dir + "/merged.db");
  EXPECT_EQ(merge.exit_code, 2) << merge.output;
  EXPECT_NE(merge.output.find("pairs[0].variants[0].median_s is not a number"), std::string::npos) << merge.output;
}

// A date bound that is not an ISO 8601 date would match no run, or every run, in silence.
TEST(history_bad_input, a_date_bound_that_is_not_a_date_is_refused) {
  const auto dir = fresh("dates");
  { aisp::history_store made(dir + "/aisp.db"); }
  const auto run = run_command(aisp() + " bench history --db " + dir + "/aisp.db --since yesterday");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("--since (the API's `since`) must be an ISO 8601 date or a prefix of one"), std::string::npos) << run.output;
  EXPECT_EQ(run_command(aisp() + " bench history --db " + dir + "/aisp.db --since 2026-11 --until 2026-11-29T10:32").exit_code, 0);
}

// Someone else's SQLite database named by mistake is refused and left as it was: aisp makes its
// tables only in an empty database.
TEST(history_bad_input, a_database_of_another_program_is_refused_untouched) {
  const auto dir = fresh("foreign");
  const auto db = dir + "/theirs.db";
  { aisp::sqlite_db theirs(db); theirs.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)"); }
  const auto history = run_command(aisp() + " bench history --db " + db);
  EXPECT_NE(history.exit_code, 0) << history.output;
  EXPECT_NE(history.output.find("is not an aisp history database (it holds other tables: invoices)"), std::string::npos) << history.output;
  const auto run = run_command(aisp() + " bench run --targets labs/host:transpose --quiet --artifacts-dir " + dir + "/run --history " + db);
  EXPECT_NE(run.exit_code, 0) << run.output;
  aisp::sqlite_db theirs(db);
  auto tables = theirs.prepare("SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'");
  ASSERT_TRUE(tables.step());
  EXPECT_EQ(tables.text(0), "invoices") << "aisp added tables to a database that is not its own";
}

// `aisp bench run` of labs/host into dir/run and dir/aisp.db, started in the background with its
// stderr in dir/stderr.txt; returns its pid (0 where it could not start).
// With `own_group`, the run leads a process group of its own, as a terminal's foreground job does.
pid_t spawn_host_run(const std::string& dir, bool own_group = false) {
  const std::string binary = aisp();
  // Short sampling: these tests want a finished pair and one under way, not verdicts.
  // Quarter-size matrices: a second pair still takes seconds (its battery and sampling), where a signal lands.
  std::vector<std::string> args = {binary, "bench", "run", "--targets", "labs/host", "--max-time", "0.5", "--min-time", "0.1", "--quiet",
                                   "--size", "rows=2048", "--size", "cols=2048",
                                   "--golden-file", std::string(AISP_SOURCE_DIR) + "/expectations/goldens.json",
                                   "--artifacts-dir", dir + "/run", "--history", dir + "/aisp.db"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (dir + "/stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (own_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  pid_t pid = 0;
  if (posix_spawn(&pid, binary.c_str(), &actions, &attributes, argv.data(), environ) != 0) pid = 0;
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits up to two minutes for the run's first pair to finish (results.json is rewritten after
// every pair); whether it did.
bool first_pair_finished(const std::string& dir) {
  for (int i = 0; i < 1200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(dir + "/run/results.json");
    const auto r = json::parse(in, nullptr, false);
    if (!r.is_discarded() && r.contains("pairs") && r["pairs"].size() == 1) return true;
  }
  return false;
}

TEST(history_sigkill, a_killed_run_keeps_its_finished_pairs_and_the_history_stays_consistent) {
  const auto dir = fresh("kill");
  const pid_t pid = spawn_host_run(dir);
  ASSERT_NE(pid, 0);
  const bool first_done = first_pair_finished(dir);  // then kill
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(first_done) << "the first pair never finished";
  ASSERT_TRUE(WIFSIGNALED(status));

  aisp::history_store history(dir + "/aisp.db");  // opens: the database is intact
  const auto runs = history.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["state"], "running");  // never finished: says so
  const auto pairs = history.pairs_of(runs[0]["id"].get<std::int64_t>());
  ASSERT_GE(pairs.size(), 1u);
  EXPECT_EQ(pairs[0]["target"], "labs/host:matrix_sum");
  EXPECT_FALSE(history.samples(runs[0]["id"].get<std::int64_t>(), "labs/host:matrix_sum", "baseline").empty());
  const auto listed = run_command(aisp() + " bench history --db " + dir + "/aisp.db");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
}

// Note [interrupted runs]: a SIGINT is acknowledged at once on stderr, the pair under way ends,
// and the run is saved and recorded as interrupted, exit 128 + 2.
TEST(history_sigint, an_interrupted_run_says_so_at_once_and_is_recorded_as_interrupted) {
  const auto dir = fresh("sigint");
  const pid_t pid = spawn_host_run(dir);
  ASSERT_NE(pid, 0);
  const bool first_done = first_pair_finished(dir);
  kill(pid, SIGINT);
  // Acknowledged before the pair under way ends: within a second, while the judge still runs.
  std::string said;
  for (int i = 0; i < 20 && said.find("aisp: interrupted") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(dir + "/stderr.txt");
    said.assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_NE(said.find("aisp: interrupted: ending the pair under way"), std::string::npos) << said;
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(first_done) << "the first pair never finished";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto results = read_json(dir + "/run/results.json");
  EXPECT_EQ(results.value("interrupted_by", ""), strsignal(SIGINT));
  aisp::history_store history(dir + "/aisp.db");
  const auto runs = history.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["state"], "interrupted");
  EXPECT_EQ(aisp::run_state_of(results), "interrupted");

  // Note [resumed runs]: only the same run resumes; then it keeps the finished pair and judges the rest.
  const std::string same = " bench run --targets labs/host --max-time 0.5 --min-time 0.1 --quiet --size rows=2048 --size cols=2048 --golden-file " +
                           std::string(AISP_SOURCE_DIR) + "/expectations/goldens.json --artifacts-dir " + dir + "/run --history " +
                           dir + "/aisp.db --resume";
  aisp::testing::expect_one_line_error("bench run --targets labs/host --max-time 0.4 --min-time 0.1 --size rows=2048 --size cols=2048 --artifacts-dir " + dir +
                                           "/run --history none --resume",
                                       "--resume: the interrupted run had max_time_s 0.5, this one asks 0.4");
  const auto resumed = run_command(aisp() + same, false);
  EXPECT_NE(resumed.exit_code, 2) << resumed.output;
  const auto whole = read_json(dir + "/run/results.json");
  EXPECT_FALSE(whole.contains("interrupted_by")) << whole.dump().substr(0, 2000);
  ASSERT_EQ(whole["pairs"].size(), 2u);
  EXPECT_EQ(whole["pairs"][0], results["pairs"][0]) << "the finished pair is kept as it was measured";
  EXPECT_EQ(whole["config"]["seed"], results["config"]["seed"]);
  ASSERT_EQ(whole["resumed_from"].size(), 1u);
  EXPECT_EQ(whole["resumed_from"][0]["started_at"], results["started_at"]);
  EXPECT_EQ(whole["resumed_from"][0]["pairs"], 1);
  aisp::testing::expect_one_line_error(same.substr(1), "ran to its end: nothing to resume");
  std::filesystem::create_directories(dir + "/cut");
  { std::ofstream(dir + "/cut/results.json") << R"({"pairs": [{"target": )"; }
  aisp::testing::expect_one_line_error("bench run --targets labs/host --history none --resume --artifacts-dir " + dir + "/cut",
                                       "is not a complete results document");
}

// Note [interrupted runs]: a terminal's Ctrl-C signals its whole foreground group, and `timeout -s
// INT` signals the run and then its group: the workers (in groups of their own) never see it, the
// second delivery is not taken for a second Ctrl-C, and the pair under way is left out rather
// than recorded as a crash of its code ("worker was killed by signal 2", a user's walkthrough).
TEST(history_sigint, a_ctrl_c_to_the_whole_group_fails_no_pair) {
  const auto dir = fresh("sigint_group");
  const pid_t pid = spawn_host_run(dir, true);
  ASSERT_NE(pid, 0);
  const bool first_done = first_pair_finished(dir);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the second pair's work
  kill(-pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(-pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(first_done) << "the first pair never finished";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by the second delivery";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto results = read_json(dir + "/run/results.json");
  EXPECT_EQ(results.value("interrupted_by", ""), strsignal(SIGINT));
  ASSERT_GE(results["pairs"].size(), 1u);
  for (const auto& pair : results["pairs"]) EXPECT_NE(pair.value("status", ""), "fail") << pair.dump(1).substr(0, 2000);
  std::ifstream in(dir + "/stderr.txt");
  const std::string said(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(said.find("signal 2"), std::string::npos) << said;
}

}  // namespace
