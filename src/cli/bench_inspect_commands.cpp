// Read-only views of the registry and the quarantine: list-targets, audit, quarantine-report.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "api/results_api.hpp"
#include "cli/commands.hpp"
#include "cli/exec_pairs_option.hpp"
#include "cli/python_pairs_option.hpp"
#include "harness/plugin_loader.hpp"
#include "results/quarantine.hpp"
#include "runner/pair_host.hpp"
#include "runner/target_selector.hpp"
#include "verify/battery.hpp"
#include "verify/tolerance.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using nlohmann::json;

std::string backend_name(const pair& p) { return p.where() == backend::cuda ? "cuda" : "host"; }

// `only`: when not empty, the targets to list (a plugin's, as `bench run --plugin` judges them).
void list_targets(const std::string& chapter, bool as_json, const std::set<std::string>& only) {
  json listing = api::list_targets(chapter);  // the results API answers; the CLI formats
  if (!only.empty()) {
    json kept = json::array();
    for (auto& item : listing) {
      if (only.count(item.value("target", "")) > 0) kept.push_back(std::move(item));
    }
    listing = std::move(kept);
  }
  if (as_json) {
    std::printf("%s\n", listing.dump(2).c_str());
    return;
  }
  for (const auto& item : listing) {
    std::string variants;
    for (const auto& v : item["variants"]) variants.append(variants.empty() ? "" : ",").append(v.get<std::string>());
    std::printf("%-28s %-5s %-40s %s\n", item["target"].get<std::string>().c_str(), item["backend"].get<std::string>().c_str(),
                variants.c_str(), item["summary"].get<std::string>().c_str());
  }
}

// Contract compliance of one pair, from its declaration alone (no GPU, no workers).
json audit_pair(const pair& p) {
  std::vector<std::string> validation;
  std::vector<std::string> held_out;
  for (const auto& w : p.workloads()) {
    if (w.kind == workload_kind::validation) validation.push_back(w.describe());
    if (w.kind == workload_kind::held_out) held_out.push_back(w.describe());
  }
  const auto& bench = p.benchmark_workload();
  const auto work = p.work_of()(bench);
  const double buffer_bytes = p.buffer_bytes(bench);
  json tolerances = json::array();
  for (const auto& spec : p.buffers()) {
    if (spec.role != buffer_role::output) continue;
    const auto tol = verify::effective_tolerance(p, spec.type);
    tolerances.push_back({{"output", spec.name}, {"dtype", dtype_name(spec.type)}, {"rtol", tol.rtol}, {"atol", tol.atol},
                          {"max_rel_l2", tol.max_rel_l2}, {"overridden", p.tolerance_of().has_value()}, {"reason", tol.reason}});
  }
  json variants = json::array();
  for (const auto& v : p.variants()) {
    json entry = {{"name", v.name}, {"summary", v.summary}, {"library", v.library}, {"precision", v.precision},
                  {"math_unit", math_unit_name(v.math)}, {"host_threads", p.threads_of(v)}};
    if (v.precision_tolerance)
      entry["tolerance"] = {{"rtol", v.precision_tolerance->rtol}, {"atol", v.precision_tolerance->atol},
                            {"max_rel_l2", v.precision_tolerance->max_rel_l2}, {"reason", v.precision_tolerance->reason}};
    variants.push_back(std::move(entry));
  }
  std::vector<std::string> gaps;
  if (validation.empty()) gaps.push_back("no validation size");
  if (held_out.empty()) gaps.push_back("no held-out size (V8)");
  if (work.bytes <= 0 && work.flops <= 0) gaps.push_back("no declared work");
  // Note [sequential passes]: a pair whose steps depend on each other may move its buffers once a step.
  if (work.bytes > buffer_bytes * p.passes_at(bench) * 1.001) gaps.push_back("declared bytes exceed the buffers (V3)");
  return {{"target", p.target()}, {"backend", backend_name(p)}, {"reference", static_cast<bool>(p.reference_of())},
          {"validation_sizes", validation}, {"held_out_sizes", held_out}, {"benchmark_size", bench.describe()},
          {"declared_bytes", work.bytes}, {"declared_flops", work.flops}, {"buffer_bytes", buffer_bytes},
          {"sequential_passes", p.passes_reason().empty() ? json(nullptr)
                                                          : json{{"passes", p.passes_at(bench)}, {"reason", p.passes_reason()}}},
          {"tolerances", tolerances}, {"variants", variants}, {"exact_math", p.is_exact_math()},
          // Note [fresh calls]: null unless the pair keeps its inputs fixed, with the reason.
          {"fixed_inputs", p.has_fixed_inputs() ? json(p.fixed_inputs_reason()) : json(nullptr)},
          // Note [short calls]: null unless the pair is timed in graph mode by default, with the reason.
          {"short_calls", p.short_calls_reason().empty() ? json(nullptr) : json(p.short_calls_reason())},
          {"times_host_launches", p.host_launches_reason().empty() ? json(nullptr) : json(p.host_launches_reason())},
          // Note [declared threads]: null for one thread, else the count and the reason.
          {"host_threads", p.host_threads() == 1 ? json(nullptr) : json{{"count", p.host_threads()}, {"reason", p.host_threads_reason()}}},
          {"compliant", gaps.empty()}, {"gaps", gaps}};
}

int audit(const std::vector<std::string>& targets, bool as_json) {
  fail_on_broken_registrations();
  json report = json::array();
  for (const auto& request : select_targets(registry::instance(), targets)) report.push_back(audit_pair(*request.declared));
  if (as_json) {
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    for (const auto& a : report) {
      std::string tolerance;
      for (const auto& t : a["tolerances"]) {
        tolerance += fmt::format("{}{} rtol {:g} atol {:g}{}", tolerance.empty() ? "" : "; ", t["output"].get<std::string>(),
                                 t["rtol"].get<double>(), t["atol"].get<double>(),
                                 t["overridden"].get<bool>() ? " (" + t["reason"].get<std::string>() + ")" : " (dtype default)");
      }
      std::printf("%-28s %s  reference:%s  validation:%zu  held-out:%zu  bytes:%.3g  flops:%.3g  %s\n",
                  a["target"].get<std::string>().c_str(), a["compliant"].get<bool>() ? "ok  " : "GAPS",
                  a["reference"].get<bool>() ? "yes" : "NO", a["validation_sizes"].size(), a["held_out_sizes"].size(),
                  a["declared_bytes"].get<double>(), a["declared_flops"].get<double>(), tolerance.c_str());
      for (const auto& gap : a["gaps"]) std::printf("    gap: %s\n", gap.get<std::string>().c_str());
    }
  }
  for (const auto& a : report) {
    if (!a["compliant"].get<bool>()) return 1;
  }
  return 0;
}

int quarantine_report(const std::string& path, bool as_json) {
  const auto entries = load_quarantine(path);
  if (as_json) {
    json list = json::array();
    for (const auto& e : entries) list.push_back({{"target", e.target}, {"codes", e.codes}, {"reason", e.reason}, {"run", e.run}, {"since", e.since}});
    std::printf("%s\n", list.dump(2).c_str());
    return 0;
  }
  if (entries.empty()) std::printf("no quarantined targets (%s)\n", path.c_str());
  for (const auto& e : entries) {
    std::string codes;
    for (const auto& c : e.codes) codes += (codes.empty() ? "" : ",") + c;
    std::printf("%-28s [%s] since %s: %s\n    run: %s\n", e.target.c_str(), codes.c_str(), e.since.c_str(), e.reason.c_str(), e.run.c_str());
  }
  return 0;
}

// `bench explain`: the validity matrix's rows for each query (a code, or a check's name).
int explain(const std::vector<std::string>& queries, bool as_json) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& query : queries) {
    for (const auto& row : api::validity_rows(query)) rows.push_back(row);
  }
  if (as_json) {
    std::printf("%s\n", rows.dump(2).c_str());
    return 0;
  }
  for (const auto& row : rows) {
    std::printf("%s  %s  [%s]\n  what aisp does: %s\n  proven by: %s\n\n", row["code"].get<std::string>().c_str(),
                row["issue"].get<std::string>().c_str(), row["status"].get<std::string>().c_str(),
                row["protection"].get<std::string>().c_str(), row["fixture"].get<std::string>().c_str());
  }
  for (const auto& query : queries) {
    if (verify::checks::load_sensitive(query))
      std::printf("%s on a busy machine: other work preempts honest code too, and this check can fail it; the run's table "
                  "says how busy the machine was (\"the machine was busy: ...\", other_work_cpus in results.json). Run "
                  "again on a quiet machine before blaming the code.\n",
                  query.c_str());
  }
  return 0;
}

}  // namespace

void fail_on_broken_registrations() {
  const auto& broken = registry::instance().broken();
  if (broken.empty()) return;
  std::string text = fmt::format("{} pair(s) break the benchmark contract: ", broken.size());
  for (const auto& b : broken) text += b + "; ";
  AISP_EXPECTS(false, text);
}

void add_plugin_option(CLI::App& command, std::vector<std::string>& plugins) {
  command.add_option("--plugin", plugins,
                     "a plugin of your own pairs (a shared library built with aisp_add_benchmark; repeatable): "
                     "its targets run with every check, like the lab's (docs/tutorial.md)")
      ->check(CLI::ExistingFile);
  // The bridge is a plugin: every command that passes its plugins on (scaling, profile, the
  // workers) passes it, and the pair files travel in the environment.
  command
      .add_option_function<std::vector<std::string>>(
          "--python",
          [&plugins](const std::vector<std::string>& files) {
            for (const auto& file : files) plugins.push_back(prepare_python_pairs(file));
          },
          "a Python pair file (repeatable): its pairs, declared with the aisp package, are judged like the lab's "
          "(docs/python_pairs.md); the interpreter is $AISP_PYTHON, else /usr/bin/python3")
      ->type_name("FILE");
  command
      .add_option_function<std::vector<std::string>>(
          "--exec",
          [&plugins](const std::vector<std::string>& files) {
            for (const auto& file : files) plugins.push_back(prepare_exec_pairs(file));
          },
          "an executable pair file (JSON, repeatable): pairs whose variants and reference are programs in any language "
          "that speak the executable protocol (docs/worker_protocol.md, \"Executable variants\")")
      ->type_name("FILE");
}

void load_user_plugins(const std::vector<std::string>& plugins) {
  const std::size_t before = loaded_plugins().size();
  host_user_plugins(plugins);  // Note [untrusted pairs]: never loaded in the judge
  for (std::size_t i = before; i < loaded_plugins().size(); ++i) {
    const auto& plugin = loaded_plugins()[i];
    if (plugin.optimized == false)
      std::fprintf(stderr,
                   "aisp: warning: plugin '%s' was built without compiler optimization: its timings measure a debug build "
                   "(configure it with -DCMAKE_BUILD_TYPE=Release)\n",
                   plugin.path.c_str());
  }
}

void add_bench_inspect_commands(CLI::App& bench, outcome& result) {
  auto* explain_command = bench.add_subcommand(
      "explain", "What a failed check means: its row of the validity matrix (the way a benchmark lies, what aisp does "
                 "about it, the planted cheat that proves it).");
  auto queries = std::make_shared<std::vector<std::string>>();
  auto explain_json = std::make_shared<bool>(false);
  explain_command->add_option("checks", *queries, "codes (T1, S2) or check names (outliers, escaped-kernel)")->required();
  explain_command->add_flag("--json", *explain_json, "print machine-readable JSON");
  explain_command->footer("Examples:\n  aisp bench explain S2\n  aisp bench explain outliers escaped-kernel");
  explain_command->callback([=, &result] { result.exit_code = explain(*queries, *explain_json); });

  auto* list = bench.add_subcommand("list-targets", "List the registered pairs, their variants and tags.");
  auto chapter = std::make_shared<std::string>();
  auto list_json = std::make_shared<bool>(false);
  auto list_plugins = std::make_shared<std::vector<std::string>>();
  list->add_option("--chapter", *chapter, "only this chapter or lab, e.g. ch07 or labs/host");
  list->add_flag("--json", *list_json, "print machine-readable JSON");
  add_plugin_option(*list, *list_plugins);
  list->footer("With --plugin, --python or --exec and no --chapter, only their pairs are listed, as `bench run`\n"
               "judges only theirs when it is given no --targets.");
  list->callback([chapter, list_json, list_plugins, &result] {
    load_user_plugins(*list_plugins);
    std::set<std::string> only;
    if (chapter->empty()) {
      for (const auto& plugin : loaded_plugins()) only.insert(plugin.targets.begin(), plugin.targets.end());
    }
    list_targets(*chapter, *list_json, only);
    result.exit_code = 0;
  });

  auto* audit_command = bench.add_subcommand(
      "audit", "Check each pair's contract from its declaration: reference, validation and held-out sizes,\n"
               "tolerance and its reason, declared work against its buffers. Exit 1 when a pair has gaps.");
  auto audit_targets = std::make_shared<std::vector<std::string>>();
  auto audit_all = std::make_shared<bool>(false);
  auto audit_json = std::make_shared<bool>(false);
  audit_command->add_option("--targets", *audit_targets, "targets to audit (same forms as bench run)")->expected(1, -1);
  audit_command->add_flag("--all", *audit_all, "audit every registered pair");
  audit_command->add_flag("--json", *audit_json, "print machine-readable JSON");
  auto audit_plugins = std::make_shared<std::vector<std::string>>();
  add_plugin_option(*audit_command, *audit_plugins);
  audit_command->callback([=, &result] {
    load_user_plugins(*audit_plugins);
    // As `bench run`: with --plugin, --python or --exec and no --targets, their pairs.
    std::vector<std::string> targets = *audit_all ? std::vector<std::string>{"all"} : *audit_targets;
    if (targets.empty())
      for (const auto& plugin : loaded_plugins()) targets.insert(targets.end(), plugin.targets.begin(), plugin.targets.end());
    AISP_EXPECTS(!targets.empty(), "name --targets or --all (or a --plugin, --python or --exec file, whose pairs are audited)");
    result.exit_code = audit(targets, *audit_json);
  });

  auto* report = bench.add_subcommand("quarantine-report", "List the quarantined targets and why (see --verify-phase quarantine).");
  auto file = std::make_shared<std::string>(artifacts_root() + "/quarantine.json");
  auto report_json = std::make_shared<bool>(false);
  report->add_option("--quarantine-file", *file, "the quarantine list (default artifacts/quarantine.json)");
  report->add_flag("--json", *report_json, "print machine-readable JSON");
  report->callback([=, &result] { result.exit_code = quarantine_report(*file, *report_json); });
}

}  // namespace aisp::cli
