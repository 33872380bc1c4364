#include "serve/rest_api.hpp"

#include <algorithm>
#include <charconv>
#include <exception>
#include <vector>

#include "api/results_api.hpp"
#include "support/readable_error.hpp"

namespace aisp::serve {
namespace {

using nlohmann::json;

// A request the client must change: its status and one line.
struct http_error {
  int status;
  std::string message;
};

std::vector<std::string> segments_of(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = path.find('/', start);
    const auto part = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) parts.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

std::int64_t positive_integer(const std::string& text, const std::string& what) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1)
    throw http_error{400, what + " must be a positive integer, not '" + text + "'"};
  return value;
}

std::string parameter(const rest_request& request, const std::string& name, bool required = false) {
  const auto found = request.query.find(name);
  if (found == request.query.end()) {
    if (required) throw http_error{400, "missing query parameter '" + name + "'"};
    return "";
  }
  return found->second;
}

int limit_of(const rest_request& request) {
  const auto text = parameter(request, "limit");
  return text.empty() ? 50 : static_cast<int>(positive_integer(text, "limit"));
}

rest_response ok(json body) { return {200, std::move(body)}; }

// The hardware keys a target's history ran on, each once.
std::vector<std::string> hardware_keys_of(const json& history) {
  std::vector<std::string> keys;
  for (const auto& run : history.value("runs", json::array())) {
    const auto key = run.value("hardware", "");
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

}  // namespace

rest_api::rest_api(std::string db_path, std::string jobs_dir, std::string token, std::string expectations_dir)
    : db_path_(std::move(db_path)),
      token_(std::move(token)),
      expectations_dir_(std::move(expectations_dir)),
      jobs_(db_path_, std::move(jobs_dir)) {}

json rest_api::routes() {
  return json::array({
      "GET /api/v1/targets?group=",
      "GET /api/v1/runs?target=&gpu=&since=&until=&limit=",
      "GET /api/v1/runs/{run}",
      "GET /api/v1/runs/{run}/pair?target=&samples=1",
      "GET /api/v1/runs/{run}/roofline",
      "GET /api/v1/runs/{run}/trace?target=",
      "GET /api/v1/compare?a={run}&b={run}",
      "GET /api/v1/history?target=&limit= (with expectation bands)",
      "GET /api/v1/ceilings",
      "GET /api/v1/validity?query=",
      "POST /api/v1/jobs {targets, verify?, max_time_s?} (token)",
      "GET /api/v1/jobs",
      "GET /api/v1/jobs/{job}",
      "GET /api/v1/jobs/{job}/events (text/event-stream)",
      "DELETE /api/v1/jobs/{job} (token)",
  });
}

rest_response rest_api::answer(const rest_request& request) {
  try {
    return route(request);
  } catch (const http_error& error) {
    return {error.status, {{"error", error.message}}};
  } catch (const api::api_error& error) {  // a run, pair or check that is not there
    return {404, {{"error", without_source_locations(error.what())}}};
  } catch (const contract_error& error) {
    return {400, {{"error", without_source_locations(error.what())}}};
  } catch (const std::exception& error) {
    return {500, {{"error", without_source_locations(error.what())}}};
  }
}

rest_response rest_api::route(const rest_request& request) {
  const auto parts = segments_of(request.path);
  if (parts.size() < 2 || parts[0] != "api" || parts[1] != "v1")
    throw http_error{404, "no such path: " + request.path + " (the API is under /api/v1)"};
  const std::string resource = parts.size() > 2 ? parts[2] : "";
  if (resource == "jobs") {
    std::string rest;
    for (std::size_t i = 3; i < parts.size(); ++i) rest += "/" + parts[i];
    return jobs_route(request, rest);
  }
  if (request.method != "GET") throw http_error{405, request.method + " is not allowed on " + request.path + " (read-only resource)"};
  if (resource.empty()) return ok({{"version", "v1"}, {"routes", routes()}});
  if (resource == "targets" && parts.size() == 3) return ok({{"targets", api::list_targets(parameter(request, "group"))}});
  if (resource == "validity" && parts.size() == 3) return ok({{"rows", api::validity_rows(parameter(request, "query", true))}});
  if (resource == "ceilings" && parts.size() == 3) return ok({{"cards", api::hardware_ceilings()}});
  auto history = api::open_history(db_path_);
  if (resource == "runs" && parts.size() == 3) {
    const api::run_filter filter{parameter(request, "target"), parameter(request, "gpu"), parameter(request, "since"),
                                 parameter(request, "until"), limit_of(request)};
    return ok({{"runs", api::list_runs(history, filter)}});
  }
  if (resource == "runs" && parts.size() == 4) return ok(api::show_run(history, positive_integer(parts[3], "the run id")));
  if (resource == "runs" && parts.size() == 5 && parts[4] == "pair")
    return ok(api::show_pair(history, positive_integer(parts[3], "the run id"), parameter(request, "target", true),
                             parameter(request, "samples") == "1"));
  if (resource == "runs" && parts.size() == 5 && parts[4] == "roofline")
    return ok(api::run_roofline(history, positive_integer(parts[3], "the run id")));
  if (resource == "runs" && parts.size() == 5 && parts[4] == "trace")
    return ok(api::pair_trace(history, positive_integer(parts[3], "the run id"), parameter(request, "target", true)));
  if (resource == "compare" && parts.size() == 3)
    return ok(api::compare(history, positive_integer(parameter(request, "a", true), "a"), positive_integer(parameter(request, "b", true), "b")));
  if (resource == "history" && parts.size() == 3) {
    const auto target = parameter(request, "target", true);
    auto answer = api::target_history(history, target, limit_of(request));
    // A malformed expectations file of the server's costs the bands, not the history.
    try {
      answer["expectations"] = api::target_expectations(target, hardware_keys_of(answer), expectations_dir_);
    } catch (const std::exception& error) {
      answer["expectations"] = nlohmann::json::object();
      answer["expectations_error"] = without_source_locations(error.what());
    }
    return ok(std::move(answer));
  }
  throw http_error{404, "no such path: " + request.path + " (GET /api/v1 lists the routes)"};
}

rest_response rest_api::jobs_route(const rest_request& request, const std::string& rest) {
  const bool changes = request.method == "POST" || request.method == "DELETE";
  if (changes && token_.empty()) throw http_error{403, "this server is read-only: start it with --token to start or stop runs"};
  if (changes && request.authorization != "Bearer " + token_)
    throw http_error{401, "starting or stopping runs needs the header 'Authorization: Bearer <token>'"};
  std::lock_guard lock(jobs_mutex_);
  (void)jobs_.poll();
  if (request.method == "POST" && rest.empty()) {
    const auto body = json::parse(request.body, nullptr, false);
    if (!body.is_object() || !body.contains("targets") || !body["targets"].is_string())
      throw http_error{400, "the body must be a JSON object with a string 'targets' (and optional verify, max_time_s)"};
    if (body.contains("max_time_s") && (!body["max_time_s"].is_number() || !(body["max_time_s"].get<double>() > 0)))
      throw http_error{400, "max_time_s must be a number of seconds above 0 (leave it out for --max-time's default)"};
    const mcp::run_request run{body["targets"].get<std::string>(), body.value("verify", false), body.value("max_time_s", 0.0), ""};
    const int id = jobs_.start(run);
    return {201, jobs_.status(id)};
  }
  if (request.method == "GET" && rest.empty()) {
    json jobs = json::array();
    for (const int id : jobs_.ids()) jobs.push_back(jobs_.status(id));
    return ok({{"jobs", jobs}});
  }
  if (rest.empty()) throw http_error{405, request.method + " is not allowed on /api/v1/jobs (GET lists, POST starts)"};
  const auto parts = segments_of(rest);
  if (parts.size() != 1) throw http_error{404, "no such job path: /api/v1/jobs" + rest};
  const auto id = static_cast<int>(positive_integer(parts[0], "the job id"));
  if (jobs_.find(id) == nullptr) throw http_error{404, "no job " + parts[0]};
  if (request.method == "GET") return ok(jobs_.status(id));
  if (request.method == "DELETE") return ok(jobs_.cancel_with_status(id));
  throw http_error{405, request.method + " is not allowed on a job"};
}

std::optional<std::string> rest_api::job_events(int job, job_event_cursor& cursor) {
  std::lock_guard lock(jobs_mutex_);
  (void)jobs_.poll();
  const auto* found = jobs_.find(job);
  if (found == nullptr) return std::nullopt;
  return job_events_since(jobs_.status(job), found->lines_read, cursor);
}

}  // namespace aisp::serve
