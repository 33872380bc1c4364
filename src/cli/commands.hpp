// One registration function per command group; each adds its subcommands and their actions.
#pragma once

#include <CLI/CLI.hpp>

namespace aisp::cli {

// Set by a command's action: the process exit code.
struct outcome {
  int exit_code = 0;
};

void add_info_command(CLI::App& app, outcome& result);
void add_bench_commands(CLI::App& app, outcome& result);
void add_worker_command(CLI::App& app, outcome& result);

}  // namespace aisp::cli
