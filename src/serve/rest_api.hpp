// `aisp serve`'s REST API (issue 23), without the HTTP: one request in, one JSON answer out,
// through the results API and the job table the MCP server uses. The HTTP glue
// (serve_module.cpp, cpp-httplib) only converts, so every route, status code and refusal is
// unit-tested here. Paths are versioned (/api/v1/...).
//
// Security: reads are open (the server binds to 127.0.0.1 unless told otherwise); anything that
// starts or stops work needs the token the server was started with ("Authorization: Bearer T"),
// and without a token the server is read-only. Bad input is a 4xx with {"error": one line}.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mcp/run_jobs.hpp"
#include "serve/job_events.hpp"

namespace aisp::serve {

struct rest_request {
  std::string method;  // GET, POST, DELETE
  std::string path;    // /api/v1/runs/3
  std::map<std::string, std::string> query;
  std::string body;
  std::string authorization;  // the Authorization header, "" when absent
};

struct rest_response {
  int status = 200;
  nlohmann::json body;
};

class rest_api {
 public:
  // `token`: "" for a read-only server. `expectations_dir`: where <hardware>.json expectations
  // live, for the history's expectation bands.
  rest_api(std::string db_path, std::string jobs_dir, std::string token, std::string expectations_dir = "expectations");
  // Thread-safe: the HTTP server answers on several threads.
  [[nodiscard]] rest_response answer(const rest_request& request);
  // The routes, for GET /api/v1 and the docs.
  [[nodiscard]] static nlohmann::json routes();
  // GET /api/v1/jobs/{job}/events: the server-sent events that bring `cursor` up to date (see
  // job_events.hpp); nullopt when there is no such job. Thread-safe, never blocks.
  [[nodiscard]] std::optional<std::string> job_events(int job, job_event_cursor& cursor);

 private:
  [[nodiscard]] rest_response route(const rest_request& request);
  [[nodiscard]] rest_response jobs_route(const rest_request& request, const std::string& rest);
  std::string db_path_;
  std::string token_;
  std::string expectations_dir_;
  std::mutex jobs_mutex_;
  mcp::job_table jobs_;
};

}  // namespace aisp::serve
