#include "cli/commands.hpp"

namespace aisp::cli {

void add_bench_commands(CLI::App& app, outcome& result) {
  auto* bench = app.add_subcommand("bench", "Run, verify, list and audit baseline/optimized pairs.");
  bench->require_subcommand(1);
  add_bench_run_commands(*bench, result);
  add_bench_inspect_commands(*bench, result);
  add_bench_peak_command(*bench, result);
  add_bench_roofline_command(*bench, result);
  add_bench_history_commands(*bench, result);
  add_bench_analysis_commands(*bench, result);
  add_bench_scaling_command(*bench, result);
}

}  // namespace aisp::cli
