// `aisp bench scaling --target T --sizes n=1024 n=65536 ...`: one `bench run` of the target per
// size (each its own worker processes, checks and artifacts folder), then how the speedup moves
// with the size. Written to <dir>/scaling.json.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "cli/commands.hpp"
#include "cli/number_checks.hpp"
#include "harness/plugin_loader.hpp"
#include "results/result_json.hpp"
#include "runner/size_overrides.hpp"
#include "runner/target_selector.hpp"
#include "runner/worker_process.hpp"
#include "support/shell_quote.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

int scaling(const std::string& target, const std::vector<std::string>& sizes, const std::string& dir, double max_time,
            const std::vector<std::string>& plugins) {
  load_user_plugins(plugins);
  std::string plugin_args;
  for (const auto& plugin : plugins) plugin_args += " --plugin " + shell_quoted(std::filesystem::canonical(plugin).string());
  // Every size is checked before the first run: a typo or a size that cannot fit is one line.
  const auto requests = select_targets(registry::instance(), {target});
  AISP_EXPECTS(requests.size() == 1, "--target names one pair, e.g. labs/host:matrix_sum; '" + target + "' selects " +
                                         std::to_string(requests.size()));
  for (const auto& size : sizes) {
    run_config config;
    config.benchmark_override = parse_size_overrides({size});
    check_size_overrides(requests, config, std::nullopt);  // device memory: each run checks it (E4)
  }
  std::filesystem::create_directories(dir);
  json rows = json::array();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto run_dir = fmt::format("{}/size-{}", dir, i);
    const auto command = fmt::format("{} bench run --targets {}{} --size {} --max-time {} --quiet --history none --artifacts-dir {}",
                                     shell_quoted(current_executable()), shell_quoted(target), plugin_args, shell_quoted(sizes[i]), max_time,
                                     shell_quoted(run_dir));
    std::fprintf(stderr, "[%zu/%zu] %s %s\n", i + 1, sizes.size(), target.c_str(), sizes[i].c_str());
    const int status = std::system(command.c_str());
    json row = {{"size", sizes[i]}, {"artifacts_dir", run_dir}, {"exit_code", status}};
    if (std::filesystem::exists(run_dir + "/results.json")) {
      const auto results = read_results_document(run_dir);
      if (!results["pairs"].empty()) {
        const auto& pair = results["pairs"][0];
        row["status"] = pair.value("status", "");
        row["workload"] = pair.value("workload", json(nullptr));
        row["speedups"] = pair.value("speedups", json::array());
        for (const auto& v : pair.value("variants", json::array())) row["median_s"][v.value("name", "")] = v.value("median_s", 0.0);
      }
    }
    rows.push_back(row);
  }
  const json document = {{"target", target}, {"sizes", rows}};
  write_json_file(dir + "/scaling.json", document);
  std::printf("%-20s %-8s %-14s %-14s %s\n", "size", "status", "baseline", "optimized", "speedup [95% CI]");
  for (const auto& row : rows) {
    const auto medians = row.value("median_s", json::object());
    std::string speedup = "-";
    for (const auto& s : row.value("speedups", json::array()))
      speedup = fmt::format("{} {:.3f}x [{:.3f}, {:.3f}] {}", s.value("variant", ""), s["speedup"].value("point", 0.0),
                            s["speedup"].value("low", 0.0), s["speedup"].value("high", 0.0), s.value("verdict", ""));
    std::printf("%-20s %-8s %11.2f us %11.2f us %s\n", row["size"].get<std::string>().c_str(), row.value("status", "?").c_str(),
                medians.value("baseline", 0.0) * 1e6, medians.value("optimized", 0.0) * 1e6, speedup.c_str());
  }
  std::printf("scaling: %s/scaling.json\n", dir.c_str());
  bool all_ran = true;
  for (const auto& row : rows) all_ran = all_ran && row.value("status", "") == "pass";
  return all_ran ? 0 : 1;
}

}  // namespace

void add_bench_scaling_command(CLI::App& bench, outcome& result) {
  auto* command = bench.add_subcommand("scaling", "Run one target at several sizes and show how its speedup scales.");
  auto target = std::make_shared<std::string>();
  auto sizes = std::make_shared<std::vector<std::string>>();
  auto dir = std::make_shared<std::string>(artifacts_root() + "/scaling");
  auto max_time = std::make_shared<double>(5);
  command->add_option("--target", *target, "one target, e.g. labs/host:matrix_sum")->required();
  command->add_option("--sizes", *sizes, "benchmark parameters, one per run: n=1024 n=65536 ...")->required()->expected(1, -1);
  command->add_option("--artifacts-dir", *dir, "where each size's run goes (default artifacts/scaling)");
  command->add_option("--max-time", *max_time, "seconds of sampling per variant and size (default 5)")->check(positive_number);
  auto plugins = std::make_shared<std::vector<std::string>>();
  add_plugin_option(*command, *plugins);
  command->callback([=, &result] { result.exit_code = scaling(*target, *sizes, *dir, *max_time, *plugins); });
}

}  // namespace aisp::cli
