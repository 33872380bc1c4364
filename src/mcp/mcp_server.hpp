// `aisp mcp`: a Model Context Protocol server over stdio (MCP 2025-06-18). Messages are JSON-RPC
// 2.0 objects, one per line, on stdin and stdout. The server answers initialize, ping, tools/list
// and tools/call; it honours notifications/cancelled for a waiting call and ignores other
// notifications; anything else gets a JSON-RPC error, never a crash.
// Only protocol messages go to stdout: whoever logs writes to stderr.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp/mcp_tools.hpp"
#include "mcp/run_jobs.hpp"

namespace aisp::mcp {

inline constexpr std::string_view protocol_version = "2025-06-18";

// JSON-RPC 2.0's error codes.
namespace rpc_error {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
}  // namespace rpc_error

class server {
 public:
  // `jobs_dir`: where the runs that start_run starts keep their artifacts.
  explicit server(std::string db_path, std::string jobs_dir = "artifacts");

  // One line in; the answer's line out, or nothing for a notification, a response, a blank line
  // or a wait_job call that waits (its answer comes from tick()).
  [[nodiscard]] std::optional<std::string> answer_line(std::string_view line);
  // Answers each line of `in` on `out`, flushed at once (the client waits for it), until `in` ends
  // or `out` fails. Waiting calls are answered when `in` ends (tests).
  void serve(std::istream& in, std::ostream& out);
  // The stdio loop: answers the lines of `in_fd` as they come and, between them, follows the
  // jobs: progress notifications and the answers of waiting calls (Note [waiting calls]).
  void serve_fd(int in_fd, std::ostream& out);
  // Follows the jobs once: the lines to send (notifications/progress, wait_job answers).
  [[nodiscard]] std::vector<std::string> tick();

 private:
  struct waiting_call {
    nlohmann::json id;
    int job = 0;
    nlohmann::json progress_token;  // null: the client asked for no progress
    double deadline_s = 0;          // on the steady clock
  };
  [[nodiscard]] std::optional<nlohmann::json> answer(const nlohmann::json& message);
  [[nodiscard]] nlohmann::json result_of(const std::string& method, const nlohmann::json& params);
  // A wait_job call on a running job: kept, answered by tick(). False: answer it now.
  bool defer_wait(const nlohmann::json& id, const nlohmann::json& params);
  job_table jobs_;
  tool_box tools_;
  std::vector<waiting_call> waiting_;
};

}  // namespace aisp::mcp
