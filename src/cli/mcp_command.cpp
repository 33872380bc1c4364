// `aisp mcp`: the results, for agents, over the Model Context Protocol on stdin/stdout
// (src/mcp/, docs/mcp.md). Read-only in this slice: no tool starts a run.
#include <csignal>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "mcp/mcp_server.hpp"

namespace aisp::cli {

void add_mcp_command(CLI::App& app, outcome& result) {
  auto* mcp = app.add_subcommand("mcp",
                                 "Serve the results to an AI agent: an MCP server (protocol 2025-06-18) on stdin/stdout.\n"
                                 "Read-only: its tools list targets and runs, show a run or a pair, compare runs, give a\n"
                                 "target's history and explain a check; none starts a run.");
  auto db = std::make_shared<std::string>("artifacts/aisp.db");
  mcp->add_option("--db", *db, "the history database (default artifacts/aisp.db, as the bench commands)");
  mcp->footer(
      "Tools: list_targets, list_runs, show_run, show_pair, compare_runs, target_history, explain_check.\n\n"
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
  mcp->callback([db, &result] {
    // A client that hangs up must end the loop, not kill the process mid-write.
    std::signal(SIGPIPE, SIG_IGN);
    std::cerr << "aisp mcp: serving " << *db << " on stdio (read-only)\n";
    mcp::server(*db).serve(std::cin, std::cout);
    result.exit_code = 0;
  });
}

}  // namespace aisp::cli
