// Note [serve module]: the HTTP half of `aisp serve`, a module the CLI opens at run time
// (lib/aisp/libaisp_serve.so), so that only `aisp serve` needs cpp-httplib (Debian's is a shared
// library): the aisp binary carried to a GPU machine without it still runs everything else. It
// converts each HTTP request into a rest_request for serve::rest_api (in the aisp executable,
// whose symbols it resolves against) and the answer back.
#include <cstdio>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "serve/rest_api.hpp"

namespace {

// Bodies over this are refused with 413: a job request is a few hundred bytes.
constexpr std::size_t max_body_bytes = 64 * 1024;

void respond(aisp::serve::rest_api& api, const httplib::Request& req, httplib::Response& res) {
  aisp::serve::rest_request request{req.method, req.path, {}, req.body, req.get_header_value("Authorization")};
  for (const auto& [name, value] : req.params) request.query[name] = value;
  const auto answer = api.answer(request);
  res.status = answer.status;
  res.set_content(answer.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

}  // namespace

// Serves until killed; returns the process's exit code. Prints the address it listens on (the
// port the system chose for port 0) on stderr, then serves.
extern "C" __attribute__((visibility("default"))) int aisp_serve_main(const char* host, int port, const char* db,
                                                                        const char* jobs_dir, const char* token) {
  aisp::serve::rest_api api(db, jobs_dir, token);
  httplib::Server server;
  server.set_payload_max_length(max_body_bytes);
  const auto handler = [&api](const httplib::Request& req, httplib::Response& res) { respond(api, req, res); };
  server.Get(".*", handler);
  server.Post(".*", handler);
  server.Delete(".*", handler);
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
  std::fprintf(stderr, "aisp serve: listening on http://%s:%d (%s; GET /api/v1 lists the routes)\n", host, bound,
               *token != '\0' ? "runs need the token" : "read-only");
  std::fflush(stderr);
  return server.listen_after_bind() ? 0 : 1;
}
