// `aisp profile ncu --targets T...`: Nsight Compute on each variant's benchmark-size calls, the
// key metrics and a bottleneck class per kernel (src/profile/), written to <dir>/profile.json;
// the full ncu reports stay beside it. Each variant is one `bench verify --audit off` under ncu,
// filtered to its NVTX range (Note [profiling one size] in src/harness/variant_session.cpp), so
// the validation sizes and the other workers are not profiled. ncu runs with --clock-control
// none: aisp never changes the card's state. Timing claims stay with `bench run` (T7).
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "cli/commands.hpp"
#include "hw/system_info.hpp"
#include "profile/bottleneck.hpp"
#include "profile/ncu_report.hpp"
#include "profile/profile_diff.hpp"
#include "runner/target_selector.hpp"
#include "runner/worker_process.hpp"
#include "support/json_file.hpp"
#include "support/paths.hpp"
#include "support/shell_quote.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct profile_options {
  std::vector<std::string> targets;
  std::vector<std::string> plugins;
  std::string artifacts_dir;
  std::string ncu = "ncu";
  int launches = 1;
  bool baseline_only = false;
};

// The ncu to run: a path as given, else the first on PATH (or in /usr/local/cuda/bin).
std::string find_ncu(const std::string& wanted) {
  if (wanted.find('/') != std::string::npos) {
    AISP_EXPECTS(fs::exists(wanted), "--ncu " + wanted + " does not exist");
    return wanted;
  }
  const std::string found = find_program(wanted, {"/usr/local/cuda/bin"});
  if (found.empty())
    throw contract_error(wanted + " (Nsight Compute) is not on PATH: install Nsight Compute or pass --ncu PATH; "
                                  "`bench run` and `bench verify` do not need it");
  return found;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The raw metrics beyond the sections (stall reasons, sectors per request, bank conflicts).
std::string raw_metrics_argument() {
  std::string list;
  for (const auto& name : profile::raw_metric_names()) list += (list.empty() ? "" : ",") + name;
  return list;
}

constexpr const char* launched_no_kernel = "no kernel launched in the benchmark-size samples of this variant";

// Why ncu gave no kernel, in one line, from its log.
std::string no_kernel_reason(const std::string& log) {
  if (log.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "the driver does not let this user read GPU performance counters (ERR_NVGPUCTRPERM)";
  if (log.find("No kernels were profiled") != std::string::npos || log.find("==PROF==") != std::string::npos) return launched_no_kernel;
  return "ncu did not run the variant (see the .ncu.log beside profile.json)";
}

json profile_variant(const profile_options& options, const std::string& ncu, const pair& declared,
                     const std::string& variant, const std::string& verify_target, const fs::path& dir) {
  const std::string slug = file_safe(declared.target() + "_" + variant);
  const fs::path report = dir / slug;
  const fs::path log = dir / (slug + ".ncu.log");
  std::string plugin_args;
  for (const auto& plugin : options.plugins) plugin_args += " --plugin " + shell_quoted(fs::canonical(plugin).string());
  const auto command = fmt::format(
      "{} --clock-control none --target-processes all --nvtx --nvtx-include {} --launch-count {} --section SpeedOfLight "
      "--section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section SchedulerStats "
      "--section LaunchStats --section ComputeWorkloadAnalysis --metrics {} -f -o {} {} bench verify --targets {}{} --audit off --mode cold "
      "--no-launch-gate --worker-timeout 600 --history none --quiet --artifacts-dir {} > {} 2>&1",
      shell_quoted(ncu), shell_quoted("aisp_benchmark_size_" + variant + "/"), options.launches, raw_metrics_argument(),
      shell_quoted(report.string()),
      shell_quoted(current_executable()), shell_quoted(verify_target), plugin_args, shell_quoted((dir / (slug + ".verify")).string()),
      shell_quoted(log.string()));
  json row = {{"variant", variant}, {"report", report.string() + ".ncu-rep"}};
  const int status = std::system(command.c_str());
  row["verify_exit_code"] = status;
  const fs::path csv = dir / (slug + ".csv");
  const fs::path raw_csv = dir / (slug + ".raw.csv");
  if (fs::exists(report.string() + ".ncu-rep")) {
    for (const auto& [page, file] : {std::pair{"details", csv}, std::pair{"raw", raw_csv}}) {
      const auto import = fmt::format("{} --import {} --csv --page {} > {} 2>> {}", shell_quoted(ncu), shell_quoted(report.string() + ".ncu-rep"),
                                      page, shell_quoted(file.string()), shell_quoted(log.string()));
      (void)std::system(import.c_str());
    }
  }
  const std::string details = fs::exists(csv) ? read_text(csv) : "";
  if (details.find("\"ID\"") == std::string::npos) {
    // A variant that verified and launched nothing (a cudaMemcpy peer: copy engines, no kernel)
    // has no counters to give, which is not a failure of the profile.
    const std::string reason = no_kernel_reason(read_text(log));
    const bool copies_only = status == 0 && reason == launched_no_kernel;
    row[copies_only ? "note" : "error"] = reason;
    if (copies_only) row["kernels"] = json::array();
    return row;
  }
  std::vector<profile::ncu_raw_launch> raw;
  if (const auto raw_text = fs::exists(raw_csv) ? read_text(raw_csv) : ""; raw_text.find("\"ID\"") != std::string::npos)
    raw = profile::parse_ncu_raw(raw_text);
  json kernels = json::array();
  for (const auto& kernel : profile::parse_ncu_details(details)) {
    auto metrics = profile::key_metrics(kernel);
    for (const auto& launch : raw) {
      if (launch.id == kernel.id) profile::add_raw_metrics(metrics, launch);
    }
    json entry = profile::to_json(metrics);
    entry["grid"] = kernel.grid;
    entry["block"] = kernel.block;
    entry["bottleneck"] = profile::to_json(profile::classify(metrics));
    kernels.push_back(std::move(entry));
  }
  row["kernels"] = std::move(kernels);
  return row;
}

std::string percent(const json& kernel, const char* key) {
  return kernel.contains(key) ? fmt::format("{:.1f}%", kernel[key].get<double>()) : "-";
}

void print_table(const json& pairs) {
  std::printf("%-28s %-22s %-34s %10s %7s %7s %7s  %s\n", "target", "variant", "kernel", "duration", "DRAM", "SM", "occup.",
              "bottleneck");
  for (const auto& pair : pairs) {
    for (const auto& variant : pair["variants"]) {
      if (variant.contains("error") || variant.contains("note")) {
        std::printf("%-28s %-22s %s\n", pair["target"].get<std::string>().c_str(), variant["variant"].get<std::string>().c_str(),
                    variant.value("error", variant.value("note", "")).c_str());
        continue;
      }
      for (const auto& kernel : variant["kernels"]) {
        const std::string duration = kernel.contains("duration_s") ? fmt::format("{:.1f} us", kernel["duration_s"].get<double>() * 1e6) : "-";
        const auto& verdict = kernel["bottleneck"];
        std::printf("%-28s %-22s %-34.34s %10s %7s %7s %7s  %s (%s)\n", pair["target"].get<std::string>().c_str(),
                    variant["variant"].get<std::string>().c_str(), kernel["kernel"].get<std::string>().c_str(), duration.c_str(),
                    percent(kernel, "dram_pct").c_str(), percent(kernel, "sm_pct").c_str(),
                    percent(kernel, "achieved_occupancy_pct").c_str(), verdict["class"].get<std::string>().c_str(),
                    verdict["detail"].get<std::string>().c_str());
        for (const auto& line : verdict["evidence"]) std::printf("%62s %s\n", "", line.get<std::string>().c_str());
      }
    }
  }
}

int profile_ncu(const profile_options& options, const std::string& command_line) {
  const std::string ncu = find_ncu(options.ncu);  // before any work: a missing ncu is one line
  load_user_plugins(options.plugins);
  const auto requests = select_targets(registry::instance(), options.targets);
  const auto system = probe_system();
  AISP_EXPECTS(system.gpu_absence_reason.empty(), "aisp profile ncu needs a CUDA GPU: " + system.gpu_absence_reason);
  const fs::path dir = options.artifacts_dir.empty()
                           ? fs::path(fmt::format("{}/profile-{}-{}", artifacts_root(), std::time(nullptr), ::getpid()))
                           : fs::path(options.artifacts_dir);
  fs::create_directories(dir);
  json pairs = json::array();
  bool failed = false;
  // profile.json is rewritten after every pair, "complete": false until the last: a run cut
  // short (a time limit, a lost machine) keeps every pair it finished.
  const auto write_document = [&](bool complete) {
    const json document = {{"command", command_line}, {"ncu", ncu}, {"complete", complete}, {"pairs", pairs}};
    write_json_file((dir / "profile.json").string(), document, 2);
  };
  std::size_t done = 0;
  for (const auto& request : requests) {
    const pair& declared = *request.declared;
    json entry = {{"target", declared.target()}, {"variants", json::array()}};
    if (declared.where() != backend::cuda || declared.gpus() != 1) {
      entry["skipped"] = declared.where() != backend::cuda ? "a host pair: no GPU kernels" : "a multi-GPU pair: not profiled yet";
      pairs.push_back(std::move(entry));
      ++done;
      continue;
    }
    std::vector<std::string> candidates = request.candidates;
    if (candidates.empty()) {
      for (const auto& v : declared.variants()) {
        if (v.name != "baseline") candidates.push_back(v.name);
      }
    }
    // --baseline-only: the baseline alone (bench verify still runs a candidate beside it).
    std::vector<std::pair<std::string, std::string>> runs = {{"baseline", declared.target() + ":" + candidates.at(0)}};
    for (const auto& candidate : candidates) {
      if (!options.baseline_only) runs.emplace_back(candidate, declared.target() + ":" + candidate);
    }
    for (const auto& [variant, verify_target] : runs) {
      std::fprintf(stderr, "[profile] %zu/%zu %s:%s under ncu\n", done + 1, requests.size(), declared.target().c_str(), variant.c_str());
      auto row = profile_variant(options, ncu, declared, variant, verify_target, dir);
      failed = failed || row.contains("error");
      entry["variants"].push_back(std::move(row));
    }
    pairs.push_back(std::move(entry));
    ++done;
    write_document(false);
  }
  write_document(true);
  print_table(pairs);
  std::printf("profile: %s\n", (dir / "profile.json").string().c_str());
  return failed ? 1 : 0;
}

// ---- aisp profile diff ----
json read_profile(const std::string& where) {
  const fs::path file = fs::is_directory(where) ? fs::path(where) / "profile.json" : fs::path(where);
  std::ifstream in(file);
  AISP_EXPECTS(in.good(), "no profile at " + file.string() + " (a profile.json of `aisp profile ncu`, or its folder)");
  const auto document = json::parse(in, nullptr, false);
  AISP_EXPECTS(!document.is_discarded() && document.contains("pairs"), file.string() + " is not a profile.json of `aisp profile ncu`");
  return document;
}

// A variant's profile as one kernel: its longest kernel's metrics, with the duration of all its
// kernels together (what the variant's call costs on the GPU).
std::optional<profile::kernel_metrics> variant_metrics(const json& pair, const std::string& variant) {
  for (const auto& row : pair["variants"]) {
    if (row.value("variant", "") != variant || !row.contains("kernels") || row["kernels"].empty()) continue;
    const json* longest = nullptr;
    double total = 0;
    for (const auto& kernel : row["kernels"]) {
      const double d = kernel.value("duration_s", 0.0);
      total += d;
      if (longest == nullptr || d > (*longest).value("duration_s", 0.0)) longest = &kernel;
    }
    auto metrics = profile::metrics_from_json(*longest);
    metrics.duration_s = total;
    return metrics;
  }
  return std::nullopt;
}

std::vector<std::string> profiled_variants(const json& pair) {
  std::vector<std::string> names;
  for (const auto& row : pair["variants"]) {
    if (row.contains("kernels") && !row["kernels"].empty()) names.push_back(row.value("variant", ""));
  }
  return names;
}

const json* find_pair(const json& document, const std::string& target) {
  for (const auto& pair : document["pairs"]) {
    if (pair.value("target", "") == target) return &pair;
  }
  return nullptr;
}

struct diff_options {
  std::vector<std::string> profiles;
  std::string target;
  std::string a;
  std::string b;
  bool as_json = false;
};

int profile_diff(const diff_options& options) {
  const json first = read_profile(options.profiles.at(0));
  const json second = options.profiles.size() > 1 ? read_profile(options.profiles[1]) : first;
  json rows = json::array();
  for (const auto& pair : first["pairs"]) {
    const std::string target = pair.value("target", "");
    if (!options.target.empty() && target != options.target) continue;
    const json* other = find_pair(second, target);
    if (other == nullptr) continue;
    std::vector<std::pair<std::string, std::string>> comparisons;  // (variant in first, variant in second)
    if (options.profiles.size() == 1) {
      const std::string a = options.a.empty() ? "baseline" : options.a;
      for (const auto& b : profiled_variants(pair)) {
        if (b != a && (options.b.empty() || b == options.b)) comparisons.emplace_back(a, b);
      }
    } else {
      for (const auto& v : profiled_variants(pair)) {
        if (options.a.empty() || v == options.a) comparisons.emplace_back(v, v);
      }
    }
    for (const auto& [a, b] : comparisons) {
      const auto before = variant_metrics(pair, a);
      const auto after = variant_metrics(*other, b);
      if (!before || !after) continue;
      auto row = profile::to_json(profile::compare_profiles(*before, *after));
      row["target"] = target;
      row["before"] = a;
      row["after"] = b;
      rows.push_back(std::move(row));
    }
  }
  AISP_EXPECTS(!rows.empty(), options.target.empty() ? "nothing to compare: no pair has two profiled variants (or a variant in both runs)"
                                                     : "nothing to compare for '" + options.target + "'");
  if (options.as_json) {
    std::printf("%s\n", rows.dump(2).c_str());
    return 0;
  }
  for (const auto& row : rows) {
    std::printf("%s: %s -> %s%s\n", row["target"].get<std::string>().c_str(), row["before"].get<std::string>().c_str(),
                row["after"].get<std::string>().c_str(), options.profiles.size() > 1 ? " (run A -> run B)" : "");
    for (const auto& line : row["explanations"]) std::printf("  - %s\n", line.get<std::string>().c_str());
    for (const auto& change : row["changes"]) {
      std::printf("    %-30s %14.6g -> %-14.6g\n", change["metric"].get<std::string>().c_str(), change["before"].get<double>(),
                  change["after"].get<double>());
    }
  }
  return 0;
}

// ---- aisp profile classify ----
// Each kernel of stored profiles judged again by this build's classifier, from the metrics the
// profile kept (no ncu, no GPU): a classifier change reaches old captures.
int profile_classify(const std::vector<std::string>& profiles, bool write) {
  int changed = 0;
  for (const auto& where : profiles) {
    json document = read_profile(where);
    for (auto& pair : document["pairs"]) {
      for (auto& row : pair["variants"]) {
        if (!row.contains("kernels")) continue;
        for (auto& kernel : row["kernels"]) {
          const auto fresh = profile::to_json(profile::classify(profile::metrics_from_json(kernel)));
          const auto& stored = kernel.value("bottleneck", json::object());
          if (stored.value("class", "") == fresh["class"] && stored.value("detail", "") == fresh["detail"]) continue;
          ++changed;
          std::printf("%s %s %s: %s (%s) -> %s (%s)\n", pair.value("target", "?").c_str(), row.value("variant", "?").c_str(),
                      kernel.value("kernel", "?").c_str(), stored.value("class", "-").c_str(), stored.value("detail", "").c_str(),
                      fresh["class"].get<std::string>().c_str(), fresh["detail"].get<std::string>().c_str());
          kernel["bottleneck"] = fresh;
        }
      }
    }
    if (write) write_json_file(fs::is_directory(where) ? (fs::path(where) / "profile.json").string() : where, document);
  }
  std::printf("%d kernel verdicts changed%s\n", changed, write && changed > 0 ? " (written)" : "");
  return 0;
}

}  // namespace

void add_profile_command(CLI::App& app, outcome& result) {
  auto* group = app.add_subcommand("profile", "Why is it faster: Nsight Compute on each variant, with a bottleneck class per kernel.");
  group->require_subcommand(1);
  auto options = std::make_shared<profile_options>();
  auto* ncu = group->add_subcommand(
      "ncu",
      "Profile each variant's benchmark-size calls under Nsight Compute (one `bench verify --audit off` per variant, "
      "filtered to that variant's NVTX range, clocks as found): duration, DRAM/L2/L1 and SM throughput, occupancy and its "
      "limiter, registers, spills, eligible warps, and a bottleneck class with its evidence and the lab pairs that teach "
      "the remedy. Writes profile.json and keeps the .ncu-rep reports. Timing claims stay with `bench run`.");
  ncu->footer("Examples:\n  aisp profile ncu --targets ch08:loop_unrolling\n  aisp profile ncu --targets ch07 --launches 2 "
              "--artifacts-dir out/prof\nThen: aisp profile diff out/prof (docs/profiling.md)");
  ncu->add_option("--targets", options->targets, "pairs (and variants) to profile, as `bench run` takes them")->required();
  add_plugin_option(*ncu, options->plugins);
  ncu->add_option("--artifacts-dir", options->artifacts_dir, "where profile.json and the reports go (default: artifacts/profile-<time>)");
  ncu->add_option("--ncu", options->ncu, "the ncu to run (default: ncu on PATH)");
  ncu->add_option("--launches", options->launches, "kernel launches profiled per variant (default 1; more for variants of several kernels)")
      ->check(CLI::Range(1, 100));
  ncu->add_flag("--baseline-only", options->baseline_only,
                "profile each pair's baseline alone (what scripts/bottleneck_agreement.py reads: the bottleneck a pair teaches)");
  ncu->callback([options, &result] { result.exit_code = profile_ncu(*options, result.command_line); });

  auto diff = std::make_shared<diff_options>();
  auto* diff_command = group->add_subcommand(
      "diff", "Compare two profiles metric by metric and say which changes explain the time: with one profile.json, the "
              "baseline (--a) against each other variant (--b); with two, each variant in run A against run B.");
  diff_command->footer("Examples:\n  aisp profile diff out/prof\n  aisp profile diff out/prof --a optimized_wide_tile --b optimized\n"
                       "  aisp profile diff before/ after/ --a optimized");
  diff_command->add_option("profiles", diff->profiles, "one or two profile.json files (or their folders)")->required()->expected(1, 2);
  diff_command->add_option("--target", diff->target, "only this pair");
  diff_command->add_option("--a", diff->a, "the variant compared from (default baseline; with two runs, only this variant)");
  diff_command->add_option("--b", diff->b, "the variant compared to (one profile; default every other variant)");
  diff_command->add_flag("--json", diff->as_json, "machine-readable output");
  diff_command->callback([diff, &result] { result.exit_code = profile_diff(*diff); });

  auto classified = std::make_shared<std::vector<std::string>>();
  auto write = std::make_shared<bool>(false);
  auto* classify_command = group->add_subcommand(
      "classify", "Judge every kernel of stored profiles again with this build's bottleneck classifier, from the metrics "
                  "they kept (no ncu, no GPU); prints each verdict that changed.");
  classify_command->footer("Examples:\n  aisp profile classify out/prof\n  aisp profile classify out/*/profile.json --write");
  classify_command->add_option("profiles", *classified, "profile.json files (or their folders)")->required();
  classify_command->add_flag("--write", *write, "store the new verdicts in the files");
  classify_command->callback([classified, write, &result] { result.exit_code = profile_classify(*classified, *write); });
}

}  // namespace aisp::cli
