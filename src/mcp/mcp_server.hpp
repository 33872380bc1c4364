// `aisp mcp`: a Model Context Protocol server over stdio (MCP 2025-06-18). Messages are JSON-RPC
// 2.0 objects, one per line, on stdin and stdout. The server answers initialize, ping, tools/list
// and tools/call; it ignores notifications; anything else gets a JSON-RPC error, never a crash.
// Only protocol messages go to stdout: whoever logs writes to stderr.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "mcp/mcp_tools.hpp"

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
  explicit server(std::string db_path);

  // One line in; the answer's line out, or nothing for a notification, a response or a blank line.
  [[nodiscard]] std::optional<std::string> answer_line(std::string_view line);
  // Answers each line of `in` on `out`, flushed at once (the client waits for it), until `in` ends
  // or `out` fails.
  void serve(std::istream& in, std::ostream& out);

 private:
  [[nodiscard]] std::optional<nlohmann::json> answer(const nlohmann::json& message);
  [[nodiscard]] nlohmann::json result_of(const std::string& method, const nlohmann::json& params);
  tool_box tools_;
};

}  // namespace aisp::mcp
