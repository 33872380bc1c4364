// One registration function per command group; each adds its subcommands and their actions.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace aisp::cli {

// Set by main before parsing: the whole command line, shell-quoted, so that results record how
// they were made. Set by a command's action: the process exit code.
struct outcome {
  std::string command_line;
  int exit_code = 0;
};

void add_info_command(CLI::App& app, outcome& result);
void add_bench_commands(CLI::App& app, outcome& result);
void add_worker_command(CLI::App& app, outcome& result);
void add_hw_command(CLI::App& app, outcome& result);
void add_new_command(CLI::App& app, outcome& result);
void add_profile_command(CLI::App& app, outcome& result);
void add_tools_command(CLI::App& app, outcome& result);
void add_triage_command(CLI::App& app, outcome& result);
void add_mcp_command(CLI::App& app, outcome& result);
void add_serve_command(CLI::App& app, outcome& result);

// The bench group's parts: run and verify (time and check), and the read-only inspections
// (list-targets, audit, quarantine-report).
void add_bench_run_commands(CLI::App& bench, outcome& result);
void add_bench_inspect_commands(CLI::App& bench, outcome& result);
void add_bench_peak_command(CLI::App& bench, outcome& result);
void add_bench_roofline_command(CLI::App& bench, outcome& result);
void add_bench_history_commands(CLI::App& bench, outcome& result);
void add_bench_analysis_commands(CLI::App& bench, outcome& result);
void add_bench_scaling_command(CLI::App& bench, outcome& result);
// Exits 2 (contract_error) when any pair file breaks the benchmark contract.
void fail_on_broken_registrations();
// `--plugin PATH` (repeatable) on a command that selects targets; load_plugins() loads them.
void add_plugin_option(CLI::App& command, std::vector<std::string>& plugins);
// Loads the --plugin libraries; warns, once each, of a plugin whose host code was built without
// optimization (its timings would measure a debug build).
void load_user_plugins(const std::vector<std::string>& plugins);

}  // namespace aisp::cli
