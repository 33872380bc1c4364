// `aisp mcp`: the results, for agents, over the Model Context Protocol on stdin/stdout
// (src/mcp/, docs/mcp.md). The history tools read; start_run starts runs as jobs.
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include "api/results_api.hpp"
#include "cli/commands.hpp"
#include "mcp/mcp_server.hpp"
#include "support/paths.hpp"

namespace aisp::cli {

void add_mcp_command(CLI::App& app, outcome& result) {
  auto* mcp = app.add_subcommand("mcp",
                                 "Serve the results to an AI agent: an MCP server (protocol 2025-06-18) on stdin/stdout.\n"
                                 "Its tools list targets and runs, show a run or a pair, compare runs, give a target's\n"
                                 "history, explain a check and show the measured ceilings; start_run starts a run as a job\n"
                                 "that wait_job follows with progress notifications and cancel_job stops.");
  auto db = std::make_shared<std::string>(default_history_db());
  mcp->add_option("--db", *db, "the history database (default $AISP_DB, else $AISP_ARTIFACTS/aisp.db, else artifacts/aisp.db, as the bench commands)");
  auto jobs_dir = std::make_shared<std::string>(artifacts_root());
  mcp->add_option("--jobs-dir", *jobs_dir, "where the runs start_run starts keep their artifacts (default artifacts)");
  mcp->footer(
      "Tools: list_targets, list_runs, show_run, show_pair, compare_runs, target_history, explain_check,\n"
      "hardware_ceilings, show_profile, start_run, job_status, wait_job, cancel_job.\n\n"
      "Register it with an MCP client (Claude Desktop, Cursor, VS Code...) in its config file, with absolute paths:\n"
      "  {\n"
      "    \"mcpServers\": {\n"
      "      \"aisp\": {\n"
      "        \"command\": \"/path/to/aisp\",\n"
      "        \"args\": [\"mcp\", \"--db\", \"/path/to/artifacts/aisp.db\"]\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "Or with Claude Code: claude mcp add aisp -- /path/to/aisp mcp --db /path/to/artifacts/aisp.db\n"
      "Try it by hand: echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' | aisp mcp\n"
      "See docs/mcp.md.");
  mcp->callback([db, jobs_dir, &result] {
    // A client that hangs up must end the loop, not kill the process mid-write.
    std::signal(SIGPIPE, SIG_IGN);
    api::check_history_if_present(*db);
    std::cerr << "aisp mcp: serving " << *db << " on stdio\n";
    mcp::server(*db, *jobs_dir).serve_fd(0, std::cout);
    result.exit_code = 0;
  });
}

}  // namespace aisp::cli
