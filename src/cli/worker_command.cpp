#include "cli/commands.hpp"
#include "runner/worker_main.hpp"

namespace aisp::cli {

void add_worker_command(CLI::App& app, outcome& result) {
  // Hidden (empty group): the judge starts workers of its own binary; users never do.
  auto* worker = app.add_subcommand("worker", "internal: serve one variant to the judge process");
  worker->group("");
  worker->callback([&result] { result.exit_code = run_worker(); });
}

}  // namespace aisp::cli
