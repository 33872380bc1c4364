#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "hw/system_info.hpp"

namespace aisp::cli {

void add_info_command(CLI::App& app, outcome& result) {
  auto* info = app.add_subcommand("info", "Show the GPUs, the host and the aisp version (read-only).");
  auto as_json = std::make_shared<bool>(false);
  info->add_flag("--json", *as_json, "print machine-readable JSON");
  info->callback([as_json, &result] {
    const auto system = probe_system();
    if (*as_json) {
      std::printf("%s\n", to_json(system).dump(2).c_str());
    } else {
      std::printf("%s", render_text(system).c_str());
    }
    result.exit_code = 0;  // no GPU is a fact to report, not an error
  });
}

}  // namespace aisp::cli
