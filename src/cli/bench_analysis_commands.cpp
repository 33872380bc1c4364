// Analysis of one run: `bench analyze` (leaderboards by speed and memory, the Pareto frontier),
// `whatif` (what fits a VRAM and latency budget), `cost` (USD per million calls from a price
// table), `power` (energy per call from NVML) and `stacking` (which declared techniques compose).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "analysis/run_analysis.hpp"
#include "analysis/serving_math.hpp"
#include "cli/number_checks.hpp"
#include "cli/commands.hpp"
#include "results/result_json.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

json rows(const std::vector<variant_point>& points) {
  json out = json::array();
  for (const auto& p : points) {
    out.push_back({{"target", p.target}, {"variant", p.variant}, {"median_s", p.median_s}, {"speedup", p.speedup},
                   {"footprint_bytes", p.footprint_bytes},
                   // null where not measured (a host pair, no NVML): 0 J read as a measurement
                   {"energy_per_call_j", p.energy_per_call_j > 0 ? json(p.energy_per_call_j) : json(nullptr)},
                   {"sol_memory_pct", p.sol_memory_pct}});
  }
  return out;
}

void print_rows(const char* title, const std::vector<variant_point>& points) {
  std::printf("%s\n", title);
  for (const auto& p : points) {
    std::printf("  %-34s %-16s %10.2f us %8.3fx %10.1f MiB  SOL %5.1f%%\n", p.target.c_str(), p.variant.c_str(), p.median_s * 1e6,
                p.speedup, p.footprint_bytes / 1048576.0, p.sol_memory_pct);
  }
  if (points.empty()) std::printf("  (none)\n");
}

int emit(const json& document, bool as_json, const std::function<void()>& text) {
  if (as_json) {
    std::printf("%s\n", document.dump(2).c_str());
  } else {
    text();
  }
  return 0;
}

struct common {
  std::string run;
  bool as_json = false;
};

CLI::App* add(CLI::App& bench, const char* name, const char* what, const std::shared_ptr<common>& options) {
  auto* command = bench.add_subcommand(name, what);
  command->add_option("--run", options->run, "the run's artifacts folder (or its results.json)")->required();
  command->add_flag("--json", options->as_json, "print machine-readable JSON");
  return command;
}

}  // namespace

void add_bench_analysis_commands(CLI::App& bench, outcome& result) {
  auto analyze_options = std::make_shared<common>();
  add(bench, "analyze", "Leaderboards by speedup and by memory footprint, and the per-target Pareto frontier.", analyze_options)
      ->callback([=, &result] {
        const auto points = points_of(read_results_document(analyze_options->run));
        const json document = {{"by_speed", rows(by_speed(points))}, {"by_memory", rows(by_memory(points))},
                               {"pareto_front", rows(pareto_front(points))}};
        result.exit_code = emit(document, analyze_options->as_json, [&] {
          print_rows("by speedup:", by_speed(points));
          print_rows("by memory footprint (harness-owned buffers):", by_memory(points));
          print_rows("Pareto frontier (time vs footprint, per target):", pareto_front(points));
        });
      });

  auto whatif_options = std::make_shared<common>();
  auto vram_gb = std::make_shared<double>(0);
  auto latency_ms = std::make_shared<double>(0);
  auto* whatif = add(bench, "whatif", "Which verified variants fit a VRAM budget and a latency budget.", whatif_options);
  whatif->add_option("--vram", *vram_gb, "GB of device memory the buffers may take (0 = any)")->check(non_negative_number);
  whatif->add_option("--latency", *latency_ms, "milliseconds a call may take (0 = any)")->check(non_negative_number);
  whatif->callback([=, &result] {
    const auto fit = fitting(points_of(read_results_document(whatif_options->run)), *vram_gb * 1e9, *latency_ms * 1e-3);
    result.exit_code = emit(rows(fit), whatif_options->as_json,
                            [&] { print_rows(fmt::format("fits {} GB and {} ms:", *vram_gb, *latency_ms).c_str(), fit); });
  });

  auto cost_options = std::make_shared<common>();
  auto gpu = std::make_shared<std::string>("h100");
  auto prices = std::make_shared<std::string>(shipped_data_file("expectations/prices.json"));
  auto usd_per_hour = std::make_shared<double>(0);
  auto* cost = add(bench, "cost", "USD per million calls of each variant: median time x your price per GPU-hour.", cost_options);
  cost->add_option("--gpu", *gpu, "the price table's key (default h100)");
  cost->add_option("--prices", *prices, "the editable price table (default expectations/prices.json here, else the one shipped with aisp)");
  cost->add_option("--usd-per-hour", *usd_per_hour, "a price that overrides the table")->check(positive_number);
  cost->callback([=, &result] {
    const auto points = points_of(read_results_document(cost_options->run));  // the run named first: its error first
    const double price = usd_per_gpu_hour(*gpu, *prices, *usd_per_hour);
    json document = json::array();
    for (const auto& p : points) {
      document.push_back({{"target", p.target}, {"variant", p.variant}, {"usd_per_million_calls", price / 3600.0 * p.median_s * 1e6}});
    }
    result.exit_code = emit(document, cost_options->as_json, [&] {
      std::printf("at %.2f USD per GPU-hour:\n", price);
      for (const auto& row : document)
        std::printf("  %-34s %-16s %.4f USD per million calls\n", row["target"].get<std::string>().c_str(),
                    row["variant"].get<std::string>().c_str(), row["usd_per_million_calls"].get<double>());
    });
  });

  auto power_options = std::make_shared<common>();
  add(bench, "power", "Energy per call of each variant, from NVML's energy counter (see --energy-window).", power_options)
      ->callback([=, &result] {
        const auto points = points_of(read_results_document(power_options->run));
        result.exit_code = emit(rows(points), power_options->as_json, [&] {
          for (const auto& p : points) {
            std::printf("  %-34s %-16s %s\n", p.target.c_str(), p.variant.c_str(),
                        p.energy_per_call_j > 0 ? fmt::format("{:.3f} mJ per call (flush included)", p.energy_per_call_j * 1e3).c_str()
                                                : "not measured (host pair, no NVML, or --energy-window 0)");
          }
        });
      });

  auto stacking_options = std::make_shared<common>();
  add(bench, "stacking", "Techniques the pairs declare (tags) and which appear together in one pair.", stacking_options)
      ->callback([=, &result] {
        const auto stacks = technique_stacks(read_results_document(stacking_options->run));
        result.exit_code = emit(stacks, stacking_options->as_json, [&] {
          for (const auto& s : stacks)
            std::printf("  %-24s in %s; composes with %s\n", s["technique"].get<std::string>().c_str(), s["targets"].dump().c_str(),
                        s["composes_with"].dump().c_str());
          if (stacks.empty()) std::printf("  (no technique tags in this run)\n");
        });
      });
}

}  // namespace aisp::cli
