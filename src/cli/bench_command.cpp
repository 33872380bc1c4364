#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "cli/commands.hpp"
#include "hw/system_info.hpp"
#include "results/terminal_table.hpp"
#include "runner/suite_runner.hpp"
#include "runner/target_selector.hpp"
#include "runner/worker_process.hpp"

namespace aisp::cli {
namespace {

struct run_options {
  std::vector<std::string> targets{"all"};
  std::string json_path;
  std::string artifacts_dir;
  std::string mode = "cold";
  std::uint64_t seed = 42;
  double max_time_s = 15;
  double min_time_s = 0.5;
  std::size_t min_samples = 10;
  double target_ci = 0.005;
  double min_effect = 0.01;
  double worker_timeout_s = 60;
  int device = 0;
  bool aa_test = false;
  bool quiet = false;
};

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[64];
  std::strftime(text, sizeof text, format, &parts);
  return text;
}

void fail_on_broken_registrations() {
  const auto& broken = registry::instance().broken();
  if (broken.empty()) return;
  std::string text = fmt::format("{} pair(s) break the benchmark contract: ", broken.size());
  for (const auto& b : broken) text += b + "; ";
  AISP_EXPECTS(false, text);
}

void list_targets(const std::string& chapter, bool as_json) {
  nlohmann::json listing = nlohmann::json::array();
  for (const auto& p : registry::instance().pairs()) {
    if (!chapter.empty() && p.group() != chapter) continue;
    std::vector<std::string> variants;
    for (const auto& v : p.variants()) variants.push_back(v.name);
    listing.push_back({{"target", p.target()}, {"group", p.group()},
                       {"backend", p.where() == backend::cuda ? "cuda" : "host"},
                       {"variants", variants}, {"summary", p.summary_text()},
                       {"benchmark_workload", p.benchmark_workload().describe()}});
  }
  AISP_EXPECTS(chapter.empty() || !listing.empty(), "no targets in chapter '" + chapter + "'");
  if (as_json) {
    std::printf("%s\n", listing.dump(2).c_str());
    return;
  }
  for (const auto& item : listing) {
    std::string variants;
    for (const auto& v : item["variants"]) variants += (variants.empty() ? "" : ",") + v.get<std::string>();
    std::printf("%-28s %-5s %-40s %s\n", item["target"].get<std::string>().c_str(),
                item["backend"].get<std::string>().c_str(), variants.c_str(),
                item["summary"].get<std::string>().c_str());
  }
}

int run_bench(const run_options& options) {
  fail_on_broken_registrations();
  const auto mode = parse_timing_mode(options.mode);
  AISP_EXPECTS(mode.has_value(), "--mode must be cold, hot or graph, not '" + options.mode + "'");
  AISP_EXPECTS(options.max_time_s > 0 && options.min_time_s >= 0 && options.target_ci > 0,
               "--max-time and --target-ci must be positive");
  const auto requests = select_targets(registry::instance(), options.targets);

  run_config config;
  config.mode = *mode;
  config.seed = options.seed;
  config.stopping.max_time_s = options.max_time_s;
  config.stopping.min_time_s = std::min(options.min_time_s, options.max_time_s);
  config.stopping.min_samples = options.min_samples;
  config.stopping.target_rel_half_width = options.target_ci;
  config.verdicts.min_effect = options.min_effect;
  config.worker_timeout_s = options.worker_timeout_s;
  config.device = options.device;
  config.aa_test = options.aa_test;
  config.executable = current_executable();
  config.artifacts_dir = options.artifacts_dir.empty()
                             ? "artifacts/run-" + utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid())
                             : options.artifacts_dir;
  std::filesystem::create_directories(config.artifacts_dir);
  config.artifacts_dir = std::filesystem::canonical(config.artifacts_dir).string();

  const auto system = probe_system();
  suite_result header;
  header.aisp_version = aisp_version();
  header.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  header.artifacts_dir = config.artifacts_dir;
  header.device = to_json(system);
  header.config = {{"mode", options.mode}, {"seed", options.seed}, {"max_time_s", options.max_time_s},
                   {"min_time_s", config.stopping.min_time_s}, {"min_samples", options.min_samples},
                   {"target_rel_ci_half_width", options.target_ci}, {"min_effect", options.min_effect}, {"worker_timeout_s", options.worker_timeout_s},
                   {"device", options.device}, {"aa_test", options.aa_test}, {"targets", options.targets}};
  suite_outputs outputs{config.artifacts_dir + "/results.json", options.json_path};
  const bool show_progress = !options.quiet && isatty(STDERR_FILENO);
  const progress_fn progress = [show_progress, &options](const std::string& line) {
    if (show_progress || (!options.quiet && line.starts_with("["))) std::fprintf(stderr, "%s\n", line.c_str());
  };
  if (!system.gpu_absence_reason.empty() && !options.quiet)
    std::fprintf(stderr, "note: %s; GPU targets will be listed as skipped\n", system.gpu_absence_reason.c_str());

  const auto suite = run_suite(requests, config, system, header, outputs, progress);
  std::printf("%s", render_table(suite).c_str());
  std::printf("results: %s\n", outputs.results_path.c_str());
  return suite.any_failed() ? 1 : 0;
}

}  // namespace

void add_bench_commands(CLI::App& app, outcome& result) {
  auto* bench = app.add_subcommand("bench", "Run, list and verify baseline/optimized pairs.");
  bench->require_subcommand(1);

  auto* list = bench->add_subcommand("list-targets", "List the registered pairs and their variants.");
  auto chapter = std::make_shared<std::string>();
  auto list_json = std::make_shared<bool>(false);
  list->add_option("--chapter", *chapter, "only this chapter or lab, e.g. ch07 or labs/host");
  list->add_flag("--json", *list_json, "print machine-readable JSON");
  list->callback([chapter, list_json, &result] {
    list_targets(*chapter, *list_json);
    result.exit_code = 0;
  });

  auto* run = bench->add_subcommand(
      "run",
      "Time pairs interleaved (A B B A) in worker processes, verify them against the fp64 reference and\n"
      "each other, and give each candidate a speedup with a bootstrap 95% CI and a verdict that never claims\n"
      "more than the measured noise floor (baseline vs itself). Exit 1 if anything failed.");
  auto options = std::make_shared<run_options>();
  run->add_option("--targets", options->targets,
                  "all | chNN | chNN:name | chNN:name:variant | labs/<lab>[:name[:variant]] (default: all)")
      ->expected(1, -1);
  run->add_option("--json", options->json_path, "also write the results JSON here");
  run->add_option("--artifacts-dir", options->artifacts_dir, "where results and logs go (default: artifacts/run-<time>)");
  run->add_option("--mode", options->mode,
                  "cold: L2 flushed before every sample (default); hot: warm batches, for microsecond kernels; "
                  "graph: batches replayed from a CUDA graph")
      ->check(CLI::IsMember({"cold", "hot", "graph"}));
  run->add_option("--seed", options->seed, "seed of every input (default 42)");
  run->add_option("--max-time", options->max_time_s, "seconds of sampling per variant before giving up on the CI target (default 15)")
      ->check(CLI::PositiveNumber);
  run->add_option("--min-time", options->min_time_s, "seconds of sampling per variant before stopping may be considered (default 0.5)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--min-samples", options->min_samples, "samples per variant before stopping may be considered (default 10)");
  run->add_option("--target-ci", options->target_ci, "stop when the 95% CI half-width of the median is below this fraction of it (default 0.005)")
      ->check(CLI::PositiveNumber);
  run->add_option("--min-effect", options->min_effect,
                  "smallest speedup worth a verdict, as a fraction (default 0.01): identical variants in two processes "
                  "differ by up to 0.4% on an H100")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--worker-timeout", options->worker_timeout_s, "seconds a worker may take to answer one request before it is killed (default 60)")
      ->check(CLI::PositiveNumber);
  run->add_option("--device", options->device, "CUDA device index (default 0)")->check(CLI::NonNegativeNumber);
  run->add_flag("--aa-test", options->aa_test, "run the baseline in the candidate's slot: a correct harness says no-difference");
  run->add_flag("--quiet", options->quiet, "no progress lines");
  run->callback([options, &result] { result.exit_code = run_bench(*options); });
}

}  // namespace aisp::cli
