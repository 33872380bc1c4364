// Note [serve module]: the HTTP half of `aisp serve`, a module the CLI opens at run time
// (lib/aisp/libaisp_serve.so), so that only `aisp serve` needs cpp-httplib (Debian's is a shared
// library): the aisp binary carried to a GPU machine without it still runs everything else. It
// converts each HTTP request into a rest_request for serve::rest_api (in the aisp executable,
// whose symbols it resolves against) and the answer back; serves the embedded dashboard
// (dashboard_assets.hpp) at every path outside /api; and streams a job's events.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "serve/host_guard.hpp"
#include "serve/rest_api.hpp"
#include "serve_http/dashboard_assets.hpp"

namespace {

// Bodies over this are refused with 413: a job request is a few hundred bytes.
constexpr std::size_t max_body_bytes = 64 * 1024;
// How often a job's event stream looks at the job, and how long it stays silent before a
// comment line that finds out whether the client is still there.
constexpr auto event_poll_interval = std::chrono::milliseconds(200);
constexpr int polls_per_keepalive = 75;  // 15 s

void set_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void respond(aisp::serve::rest_api& api, const httplib::Request& req, httplib::Response& res) {
  aisp::serve::rest_request request{req.method, req.path, {}, req.body, req.get_header_value("Authorization")};
  for (const auto& [name, value] : req.params) request.query[name] = value;
  const auto answer = api.answer(request);
  set_json(res, answer.status, answer.body);
}

bool is_api_path(const std::string& path) { return path == "/api" || path.rfind("/api/", 0) == 0; }

// Only the embedded table answers: a path that is not one of its keys, ".." or not, is a 404.
void serve_asset(const httplib::Request& req, httplib::Response& res) {
  const auto* asset = aisp::serve::find_dashboard_asset(req.path);
  if (asset == nullptr) {
    set_json(res, 404, {{"error", "no such page: " + req.path + " (the dashboard is at /, the API at /api/v1)"}});
    return;
  }
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-cache");
  // The pages load only their own embedded files and talk only to this server; no other site
  // may frame them.
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_content(std::string(asset->bytes), std::string(asset->content_type).c_str());
}

// GET /api/v1/jobs/{job}/events: text/event-stream until the job ends or the client leaves.
void stream_job_events(aisp::serve::rest_api& api, const httplib::Request& req, httplib::Response& res) {
  const int job = std::stoi(req.matches[1].str());
  auto cursor = aisp::serve::cursor_after(req.get_header_value("Last-Event-ID"));
  auto first = api.job_events(job, cursor);
  if (!first) {
    set_json(res, 404, {{"error", "no job " + req.matches[1].str()}});
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [&api, job, cursor, pending = std::move(*first), quiet_polls = 0](std::size_t, httplib::DataSink& sink) mutable {
        if (pending.empty()) {
          std::this_thread::sleep_for(event_poll_interval);
          pending = api.job_events(job, cursor).value_or("");
          if (pending.empty() && ++quiet_polls >= polls_per_keepalive) pending = ": still running\n\n";
        }
        if (pending.empty()) return true;
        quiet_polls = 0;
        if (!sink.write(pending.data(), pending.size())) return false;  // the client left
        pending.clear();
        if (cursor.ended) sink.done();
        return true;
      });
}

}  // namespace

// Serves until killed; returns the process's exit code. Prints the address it listens on (the
// port the system chose for port 0) on stderr, then serves.
extern "C" __attribute__((visibility("default"))) int aisp_serve_main(const char* host, int port, const char* db,
                                                                        const char* jobs_dir, const char* token,
                                                                        const char* expectations_dir) {
  aisp::serve::rest_api api(db, jobs_dir, token, expectations_dir);
  httplib::Server server;
  server.set_payload_max_length(max_body_bytes);
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, under which a second `aisp serve`
  // on the same port bound beside the first and the two answered requests in turn.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_pre_routing_handler([bound_host = std::string(host)](const httplib::Request& req, httplib::Response& res) {
    if (aisp::serve::host_header_allowed(req.get_header_value("Host"), bound_host)) return httplib::Server::HandlerResponse::Unhandled;
    set_json(res, 403, {{"error", "the Host header '" + req.get_header_value("Host") + "' does not name this server (" + bound_host +
                                      "): open the dashboard by its address (Note [DNS rebinding])"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  const auto handler = [&api](const httplib::Request& req, httplib::Response& res) { respond(api, req, res); };
  // Handlers match in the order they were added: the event stream before the catch-all.
  server.Get(R"(/api/v1/jobs/(\d{1,9})/events)",
             [&api](const httplib::Request& req, httplib::Response& res) { stream_job_events(api, req, res); });
  server.Get(".*", [&api](const httplib::Request& req, httplib::Response& res) {
    if (is_api_path(req.path)) respond(api, req, res);
    else serve_asset(req, res);
  });
  server.Post(".*", handler);
  server.Delete(".*", handler);
  // Methods no resource takes still reach the API, which answers 405 as docs/serve.md says
  // (unregistered, cpp-httplib answered them 400 with no body).
  server.Put(".*", handler);
  server.Patch(".*", handler);
  server.Options(".*", handler);
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string why = res.status == 413 ? "the request body is over 64 KiB" : "the request could not be served";
    res.set_content(nlohmann::json{{"error", why}}.dump(), "application/json");
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    std::fprintf(stderr, "aisp: error: cannot listen on %s:%d (in use, or not an address of this host)\n", host, port);
    return 2;
  }
  std::fprintf(stderr, "aisp serve: listening on http://%s:%d (%s; the dashboard is at /, GET /api/v1 lists the routes)\n",
               host, bound, *token != '\0' ? "runs need the token" : "read-only");
  std::fflush(stderr);
  return server.listen_after_bind() ? 0 : 1;
}
