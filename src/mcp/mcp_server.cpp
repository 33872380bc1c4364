#include "mcp/mcp_server.hpp"

#include <exception>
#include <istream>
#include <ostream>
#include <utility>

#include "hw/system_info.hpp"

namespace aisp::mcp {
namespace {

using nlohmann::json;

// A method's failure that JSON-RPC reports as an error object rather than a result.
struct rpc_failure {
  int code;
  std::string message;
};

json error_reply(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json initialize_result() {
  return {{"protocolVersion", protocol_version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "aisp"}, {"title", "aisp benchmark results"}, {"version", aisp_version()}}},
          {"instructions",
           "Read-only access to aisp's benchmark results: registered targets, recorded runs, a run's or a pair's "
           "verdicts, speedup CIs, SOL and failed checks, comparisons of runs, a target's history, and what a "
           "validity check means. No tool starts a run."}};
}

}  // namespace

server::server(std::string db_path) : tools_(std::move(db_path)) {}

json server::result_of(const std::string& method, const json& params) {
  if (method == "initialize") return initialize_result();  // the only version we speak, whatever was asked (spec: lifecycle)
  if (method == "ping") return json::object();
  if (method == "tools/list") return {{"tools", tools_.listing()}};
  if (method == "tools/call") {
    if (!params.is_object() || !params.contains("name") || !params["name"].is_string())
      throw rpc_failure{rpc_error::invalid_params, "tools/call needs params.name, a tool's name (see tools/list)"};
    const auto name = params["name"].get<std::string>();
    if (!tools_.has(name)) throw rpc_failure{rpc_error::invalid_params, "unknown tool '" + name + "' (see tools/list)"};
    return tools_.call(name, params.value("arguments", json::object()));
  }
  throw rpc_failure{rpc_error::method_not_found, "method not found: " + method};
}

std::optional<json> server::answer(const json& message) {
  if (!message.is_object() || !message.contains("jsonrpc") || message["jsonrpc"] != "2.0")
    return error_reply(nullptr, rpc_error::invalid_request, "not a JSON-RPC 2.0 message object");
  if (!message.contains("method")) return std::nullopt;  // a response to us: we send no requests
  const bool has_id = message.contains("id");
  const json id = has_id ? message["id"] : json(nullptr);
  const bool usable_id = !has_id || id.is_string() || id.is_number_integer();
  if (!message["method"].is_string() || !usable_id)
    return error_reply(usable_id ? id : json(nullptr), rpc_error::invalid_request,
                       "a request needs a string method and a string or integer id");
  if (!has_id) return std::nullopt;  // notifications (initialized, cancelled...) need no answer
  try {
    const auto result = result_of(message["method"].get<std::string>(), message.value("params", json::object()));
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}};
  } catch (const rpc_failure& failure) {
    return error_reply(id, failure.code, failure.message);
  } catch (const std::exception& error) {
    return error_reply(id, rpc_error::internal_error, error.what());
  }
}

std::optional<std::string> server::answer_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty()) return std::nullopt;
  const auto message = json::parse(line, nullptr, false);
  if (message.is_discarded()) return error_reply(nullptr, rpc_error::parse_error, "parse error: not valid JSON").dump();
  try {
    const auto reply = answer(message);
    // Replace, not throw, on invalid UTF-8 from a stored string: the client still gets its answer.
    return reply ? std::optional<std::string>(reply->dump(-1, ' ', false, json::error_handler_t::replace)) : std::nullopt;
  } catch (const std::exception& error) {  // a message shape nobody foresaw: answer it, keep serving
    return error_reply(nullptr, rpc_error::internal_error, error.what()).dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

void server::serve(std::istream& in, std::ostream& out) {
  for (std::string line; std::getline(in, line);) {
    if (const auto reply = answer_line(line)) {
      out << *reply << '\n';
      out.flush();
      if (!out) return;
    }
  }
}

}  // namespace aisp::mcp
