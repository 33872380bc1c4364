#include "mcp/mcp_server.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <istream>
#include <ostream>
#include <thread>
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
           "aisp's benchmark results: registered targets, recorded runs, a run's or a pair's verdicts, speedup "
           "CIs, SOL and failed checks, comparisons of runs, a target's history, what a validity check means and "
           "the measured hardware ceilings. start_run starts a run as a job; wait_job follows it with progress "
           "notifications, job_status reads it, cancel_job stops it."}};
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

server::server(std::string db_path, std::string jobs_dir) : jobs_(db_path, std::move(jobs_dir)), tools_(db_path, jobs_) {}

// Note [waiting calls]: wait_job on a running job is not answered at once. The call is kept with
// its id, its progressToken and its deadline; the loop (serve_fd) reads the jobs' output between
// the client's lines and sends notifications/progress for it, then its answer when the job ends
// or the deadline passes. A client's notifications/cancelled drops it unanswered (MCP spec).
bool server::defer_wait(const json& id, const json& params) {
  const auto arguments = params.value("arguments", json::object());
  if (!schema_violation(tools_.schema_of("wait_job"), arguments).empty()) return false;  // the tool reports it
  const int job = arguments["job"].get<int>();
  const auto* found = jobs_.find(job);
  if (found == nullptr || found->state != "running") return false;
  const auto meta = params.value("_meta", json::object());
  waiting_.push_back({id, job, meta.value("progressToken", json(nullptr)), now_s() + arguments.value("timeout_s", 600.0)});
  return true;
}

std::vector<std::string> server::tick() {
  std::vector<std::string> lines;
  const auto changed = jobs_.poll();
  const double now = now_s();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const auto* job = jobs_.find(it->job);
    const bool job_changed = std::find(changed.begin(), changed.end(), it->job) != changed.end();
    if (job_changed && !it->progress_token.is_null() && job->pairs_total > 0)
      lines.push_back(json{{"jsonrpc", "2.0"},
                           {"method", "notifications/progress"},
                           {"params", {{"progressToken", it->progress_token}, {"progress", job->pairs_done},
                                       {"total", job->pairs_total},
                                       {"message", job->last_lines.empty() ? "" : job->last_lines.back()}}}}
                          .dump(-1, ' ', false, json::error_handler_t::replace));
    if (job->state != "running" || now >= it->deadline_s) {
      lines.push_back(json{{"jsonrpc", "2.0"}, {"id", it->id}, {"result", tools_.call("wait_job", {{"job", it->job}})}}
                          .dump(-1, ' ', false, json::error_handler_t::replace));
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  return lines;
}

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
  if (!message.contains("method")) {
    if (message.contains("result") || message.contains("error")) return std::nullopt;  // a response to us: we send no requests
    const json id = message.value("id", json(nullptr));
    return error_reply(id.is_string() || id.is_number_integer() ? id : json(nullptr), rpc_error::invalid_request,
                       "a message needs a method (a request or notification), or a result or an error (a response)");
  }
  const bool has_id = message.contains("id");
  const json id = has_id ? message["id"] : json(nullptr);
  const bool usable_id = !has_id || id.is_string() || id.is_number_integer();
  if (!message["method"].is_string() || !usable_id)
    return error_reply(usable_id ? id : json(nullptr), rpc_error::invalid_request,
                       "a request needs a string method and a string or integer id");
  const json params = message.contains("params") && message["params"].is_object() ? message["params"] : json::object();
  if (!has_id) {  // notifications need no answer; a cancelled wait is dropped
    if (message["method"] == "notifications/cancelled") {
      const auto request = params.value("requestId", json(nullptr));
      std::erase_if(waiting_, [&](const waiting_call& call) { return call.id == request; });
    }
    return std::nullopt;
  }
  if (message["method"] == "tools/call" && params.value("name", json()) == "wait_job" && defer_wait(id, params)) return std::nullopt;
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
  while (!waiting_.empty()) {
    for (const auto& sent : tick()) out << sent << '\n';
    out.flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void server::serve_fd(int in_fd, std::ostream& out) {
  std::string pending;
  const auto send = [&](const std::string& line) {
    out << line << '\n';
    out.flush();
    return static_cast<bool>(out);
  };
  for (bool open = true; open || !waiting_.empty();) {
    pollfd input{in_fd, POLLIN, 0};
    const bool following = !waiting_.empty() || jobs_.any_running();
    const int ready = open ? ::poll(&input, 1, following ? 100 : -1) : 0;
    if (ready > 0) {
      char chunk[65536];
      const ssize_t got = ::read(in_fd, chunk, sizeof chunk);
      if (got <= 0) {
        open = false;  // the client hung up: finish what it waits for, then end
      } else {
        pending.append(chunk, static_cast<std::size_t>(got));
        for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
          const auto line = pending.substr(0, end);
          pending.erase(0, end + 1);
          if (const auto reply = answer_line(line); reply && !send(*reply)) return;
        }
      }
    }
    for (const auto& line : tick()) {
      if (!send(line)) return;
    }
    if (!open && !waiting_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace aisp::mcp
