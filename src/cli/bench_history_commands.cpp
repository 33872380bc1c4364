// The history and what is made from it: `bench history`, `compare-runs`, `expectations`,
// `report` and `merge`. The database defaults to artifacts/aisp.db (see `bench run --history`).
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "api/results_api.hpp"
#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "history/expectations.hpp"
#include "history/history_store.hpp"
#include "history/run_comparison.hpp"
#include "results/launch_folders.hpp"
#include "results/result_json.hpp"
#include "results/report_formats.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

// Through the results API (src/api), as `aisp mcp`'s list_runs and `aisp serve`'s /api/v1/runs.
int show_history(const std::string& db, const api::run_filter& filter, bool as_json) {
  auto history = api::open_history(db);
  const auto runs = api::list_runs(history, filter);
  if (as_json) {
    std::printf("%s\n", runs.dump(2).c_str());
    return 0;
  }
  const bool one_target = !filter.target.empty();
  std::printf("%-5s %-21s %-9s %-8s %-6s %s\n", "run", "started", "state", "hardware", "pairs", one_target ? "speedups" : "artifacts");
  for (const auto& r : runs) {
    std::string detail = r.value("artifacts_dir", "");
    if (one_target) {
      detail.clear();
      for (const auto& s : r.value("speedups", json::array()))
        detail += fmt::format("{} {:.3f}x [{:.3f}, {:.3f}] {}; ", s.value("variant", ""), s["speedup"].value("point", 0.0),
                              s["speedup"].value("low", 0.0), s["speedup"].value("high", 0.0), s.value("verdict", ""));
    }
    std::printf("%-5lld %-21s %-9s %-8s %-6lld %s\n", static_cast<long long>(r["id"].get<std::int64_t>()),
                r.value("started_at", "").c_str(), r.value("state", "").c_str(), r.value("hardware", "").c_str(),
                static_cast<long long>(r["pairs"].get<std::int64_t>()), detail.c_str());
  }
  if (runs.empty()) std::printf("(no runs%s)\n", one_target ? (" of " + filter.target).c_str() : "");
  return 0;
}

// Marks a recorded run against the file; exit 1 when a speedup regressed.
// A pair that did not pass has no speedup to hold to an expectation: --check says so and fails,
// as a CI gate must (it read an invalid run's speedup as "met", a user's walkthrough, 2026-12-04).
int check_run(const json& expectations, const json& results) {
  int regressed = 0;
  for (const auto& p : results["pairs"]) {
    if (const auto status = p.value("status", std::string("pass")); status != "pass") {
      std::printf("%s: not checked: the pair's status is %s (%s)\n", p.value("target", "").c_str(), status.c_str(),
                  p.value("message", std::string()).c_str());
      regressed += status != "skip";
      continue;
    }
    for (const auto& s : p.value("speedups", json::array())) {
      json vs_peer;
      json recorded;
      double median_s = 0;
      for (const auto& v : p.value("variants", json::array())) {
        if (v.value("name", "") != s.value("variant", "")) continue;
        vs_peer = v.value("vs_peer", json(nullptr));
        median_s = v.value("median_s", 0.0);
        recorded = recorded_metrics_of(v.value("goal_metrics", json(nullptr)));
      }
      const auto mark = mark_against(expectations, p.value("target", ""), s.value("variant", ""), s["speedup"].value("low", 0.0),
                                     s["speedup"].value("high", 0.0), vs_peer, median_s, recorded);
      regressed += mark.starts_with("regressed");
      std::printf("%s %s: %s (%.3fx [%.3f, %.3f])\n", p.value("target", "").c_str(), s.value("variant", "").c_str(), mark.c_str(),
                  s["speedup"].value("point", 0.0), s["speedup"].value("low", 0.0), s["speedup"].value("high", 0.0));
    }
  }
  return regressed > 0 ? 1 : 0;
}

// A hardware key names a file under expectations/: letters, digits, - and _ (h100, h200, host).
bool is_hardware_key(const std::string& key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

int expectations_command(const std::string& hardware, const std::string& file, const std::string& run, double min_speedup,
                         bool update, bool check) {
  AISP_EXPECTS(is_hardware_key(hardware),
               "--hardware wants a card key such as h100, h200 or host (lower-case letters, digits, - and _), not '" + hardware + "'");
  AISP_EXPECTS(run.empty() || check || update,
               "--run is read with --update (write its speedups) or --check (mark it); alone it would be ignored");
  AISP_EXPECTS(!(check && update), "--check and --update together: check the run against the file first, then update it");
  const std::string path = file.empty() ? "expectations/" + hardware + ".json" : file;
  auto expectations = load_expectations(path, hardware);
  if (!check && !update && !std::filesystem::exists(path))  // showing nothing at all: say why, to stderr
    std::fprintf(stderr, "aisp: no expectations recorded for %s yet (%s does not exist; --update --run DIR writes it)\n",
                 hardware.c_str(), path.c_str());
  if (check) {
    AISP_EXPECTS(!run.empty(), "--check needs --run (the artifacts folder to mark)");
    const auto results = read_results_document(run);
    const auto key = hardware_key_of(results);
    AISP_EXPECTS(key == hardware, "the run was measured on " + key + ", not " + hardware);
    return check_run(expectations, results);
  }
  if (update) {
    AISP_EXPECTS(!run.empty(), "--update needs --run (the artifacts folder of a trusted run)");
    const auto results = read_results_document(run);
    const auto key = hardware_key_of(results);
    AISP_EXPECTS(key == hardware, "the run was measured on " + key + ", not " + hardware);
    const int written = update_expectations(expectations, results, min_speedup);
    save_expectations(path, expectations);
    std::printf("%d entries written to %s\n", written, path.c_str());
    return 0;
  }
  std::printf("%s\n", expectations.dump(2).c_str());
  return 0;
}

int report_command(const std::string& run, const std::string& format, const std::string& output) {
  const auto results = read_results_document(run);
  std::string text;
  if (format == "md") text = report_markdown(results);
  if (format == "csv") text = report_csv(results);
  if (format == "json") text = results.dump(2) + "\n";
  if (format == "html") text = report_html(results);
  if (output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream out(output);
  out << text;
  AISP_EXPECTS(out.good(), "cannot write " + output);
  std::printf("report: %s\n", output.c_str());
  return 0;
}

// Note [launch]: a launch's run folder stands for its launch ranks' folders; a rank host's folder
// (a launch manifest and worker logs, no results) is recorded as a run with no pairs.
int merge_command(const std::string& db, const std::vector<std::string>& runs) {
  history_store history(db);
  for (const auto& run : expand_launch_folders(runs)) {
    if (const auto launch_only = launch_only_document(run)) {
      const auto id = history.ingest(*launch_only);
      const auto& launch = (*launch_only)["launch"];
      std::printf("%s -> run %lld (launch rank %d on %s: its manifest and worker logs, no results)\n", run.c_str(),
                  static_cast<long long>(id), launch["launch"].value("launch_rank", -1), launch.value("host", "?").c_str());
      continue;
    }
    const auto id = history.ingest(read_results_document(run));
    std::printf("%s -> run %lld\n", run.c_str(), static_cast<long long>(id));
  }
  return 0;
}

// compare-runs' two runs: two run ids of `db`, or two runs' folders (or results.json files),
// recorded into a history of their own in a fresh temporary folder (a folder is what a user
// often has at hand; comparing folders once meant `bench merge` into a database first).
struct compared_runs {
  std::string db;
  std::int64_t a = 0;
  std::int64_t b = 0;
};

compared_runs runs_to_compare(const std::string& db, const std::string& a, const std::string& b) {
  const auto is_id = [](const std::string& text) {
    return !text.empty() && text.size() < 18 && text.find_first_not_of("0123456789") == std::string::npos;
  };
  if (is_id(a) && is_id(b)) return {db, std::stoll(a), std::stoll(b)};
  AISP_EXPECTS(!is_id(a) && !is_id(b), "compare-runs takes two run ids of the history or two runs' folders, not one of each ('" + a +
                                           "', '" + b + "'); `aisp bench merge --db " + db + " FOLDER` records a folder as a run id");
  char folder[] = "/tmp/aisp-compare-XXXXXX";
  AISP_EXPECTS(::mkdtemp(folder) != nullptr, "compare-runs: cannot make a temporary folder for the two runs' history");
  const std::string own_db = std::string(folder) + "/compare.db";
  try {
    history_store history(own_db);
    const auto first = history.ingest(read_results_document(a));
    const auto second = history.ingest(read_results_document(b));
    AISP_EXPECTS(first != second, "compare-runs: '" + a + "' and '" + b + "' are the same run");
    return {own_db, first, second};
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(folder, ignored);
    throw;
  }
}

}  // namespace

void add_bench_history_commands(CLI::App& bench, outcome& result) {
  auto db = std::make_shared<std::string>(default_history_db());
  const auto add_db = [&](CLI::App* command) { command->add_option("--db", *db, "the history database (default $AISP_DB, else $AISP_ARTIFACTS/aisp.db, else artifacts/aisp.db)"); };

  auto* history = bench.add_subcommand("history", "List the recorded runs, newest first; with --target, that pair's speedups per run.");
  auto filter = std::make_shared<api::run_filter>();
  filter->limit = std::numeric_limits<int>::max();
  auto as_json = std::make_shared<bool>(false);
  add_db(history);
  history->add_option("--target", filter->target, "only runs holding this target, e.g. ch07:transpose (and its speedups)");
  history->add_option("--gpu", filter->gpu, "only runs on this card: part of its name or the hardware key (h100)");
  history->add_option("--since", filter->since, "only runs started on or after this ISO 8601 date or prefix (2026-11-01)");
  history->add_option("--until", filter->until, "only runs started on or before it, that day included");
  history->add_option("--limit", filter->limit, "at most this many runs (default: all)")->check(cli::positive_number);
  history->add_flag("--json", *as_json, "print machine-readable JSON (the results API's list_runs)");
  history->callback([=, &result] { result.exit_code = show_history(*db, *filter, *as_json); });

  auto* compare = bench.add_subcommand("compare-runs",
                                       "Per target and variant: run B's time over run A's with a bootstrap CI on the stored\n"
                                       "samples, and faster/slower/unchanged. Warns across cards, drivers, modes and sizes\n"
                                       "(--strict refuses them); --fail-on-slower makes it a regression gate for CI.");
  auto run_a = std::make_shared<std::string>();
  auto run_b = std::make_shared<std::string>();
  auto compare_json = std::make_shared<bool>(false);
  auto strict = std::make_shared<bool>(false);
  auto fail_on_slower = std::make_shared<bool>(false);
  add_db(compare);
  compare->add_option("A", *run_a, "the earlier run: its id in the history (see bench history), or its folder or results.json")->required();
  compare->add_option("B", *run_b, "the later run, as A (two ids, or two folders)")->required();
  compare->footer("Examples:\n  aisp bench compare-runs 3 7 --db artifacts/aisp.db\n"
                  "  aisp bench compare-runs artifacts/run-A artifacts/run-B --fail-on-slower");
  compare->add_flag("--json", *compare_json, "print machine-readable JSON");
  compare->add_flag("--strict", *strict,
                    "refuse (exit 1, nothing compared) when the runs differ in card, driver, timing mode or a "
                    "pair's benchmark size, or either is a `bench verify` run: such ratios measure the difference, not the code");
  compare->add_flag("--fail-on-slower", *fail_on_slower, "exit 1 when any variant of run B is slower than in run A");
  compare->callback([=, &result] {
    const auto [history_db, a, b] = runs_to_compare(*db, *run_a, *run_b);
    // Two folders' history is this command's own: gone when it ends (after the store closes).
    const std::shared_ptr<void> own_history(nullptr, [folder = history_db == *db ? std::filesystem::path()
                                                                                  : std::filesystem::path(history_db).parent_path()](void*) {
      std::error_code ignored;
      if (!folder.empty()) std::filesystem::remove_all(folder, ignored);
    });
    auto store = api::open_history(history_db);  // through the results API, as MCP's and serve's compare
    auto comparison = api::compare_checked(store, a, b);
    if (history_db != *db) {
      comparison.folder_a = *run_a;
      comparison.folder_b = *run_b;
    }
    if (*strict && !comparison.warnings.empty()) {
      std::fprintf(stderr, "aisp: compare-runs --strict refused: %s\n", comparison.warnings.front().c_str());
      result.exit_code = 1;
      return;
    }
    if (*compare_json) {
      std::printf("%s\n", to_json(comparison).dump(2).c_str());
    } else {
      std::printf("%s", render_text(comparison).c_str());
    }
    const bool any_slower = std::any_of(comparison.changes.begin(), comparison.changes.end(),
                                        [](const variant_change& c) { return c.verdict == "slower"; });
    // Nothing compared is no answer: a regression gate that compared nothing must not pass.
    if (comparison.changes.empty()) std::fprintf(stderr, "aisp: compare-runs: the two runs share no target and variant\n");
    result.exit_code = (*fail_on_slower && any_slower) || comparison.changes.empty() ? 1 : 0;
  });

  auto* expect = bench.add_subcommand("expectations",
                                      "Show, or --update from a trusted run, the expected speedups of this hardware\n"
                                      "(expectations/<hardware>.json); `bench run` marks each result met/regressed/improved.");
  auto hardware = std::make_shared<std::string>();
  auto file = std::make_shared<std::string>();
  auto run = std::make_shared<std::string>();
  auto min_speedup = std::make_shared<double>(1.05);
  auto update = std::make_shared<bool>(false);
  auto check = std::make_shared<bool>(false);
  expect->add_option("--hardware", *hardware, "h100, h200, ... (or host)")->required();
  expect->add_option("--file", *file, "the expectations file (default expectations/<hardware>.json)");
  expect->add_option("--run", *run, "with --update or --check: the run's artifacts folder (or its results.json)");
  expect->add_option("--min-speedup", *min_speedup, "only speedups whose CI low is at least this (default 1.05)")->check(positive_number);
  expect->add_flag("--update", *update, "write the run's passing speedups into the file");
  expect->add_flag("--check", *check, "mark the run met/regressed/improved against the file; exit 1 when one regressed");
  expect->callback([=, &result] { result.exit_code = expectations_command(*hardware, *file, *run, *min_speedup, *update, *check); });

  auto* report = bench.add_subcommand("report", "One run's results as Markdown, CSV, JSON or a self-contained HTML page.");
  auto report_run = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("md");
  auto output = std::make_shared<std::string>();
  report->add_option("--run", *report_run, "the run's artifacts folder (or its results.json)")->required();
  report->add_option("--format", *format, "md (default), csv, json or html")->check(CLI::IsMember({"md", "csv", "json", "html"}));
  report->add_option("--output", *output, "write here instead of stdout");
  report->callback([=, &result] { result.exit_code = report_command(*report_run, *format, *output); });

  auto* merge = bench.add_subcommand("merge",
                                     "Fold the artifact folders of other hosts or ranks into the history. A launch's run folder\n"
                                     "(launch-rank-<r>/ inside, from mpirun or srun) stands for all its launch ranks' folders.");
  auto folders = std::make_shared<std::vector<std::string>>();
  add_db(merge);
  merge->add_option("folders", *folders, "artifact folders (each with results.json, or a launch rank's launch.json, or a launch's run folder)")->required()->expected(1, -1);
  merge->callback([=, &result] { result.exit_code = merge_command(*db, *folders); });
}

}  // namespace aisp::cli
