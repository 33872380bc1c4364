// `aisp serve`: the results over HTTP, a versioned JSON API (src/serve/rest_api.hpp) through the
// serve module (Note [serve module] in src/serve_http/serve_module.cpp). docs/serve.md.
#include <dlfcn.h>

#include <filesystem>
#include <memory>
#include <string>

#include "aisp/check.hpp"
#include "api/results_api.hpp"
#include "cli/commands.hpp"
#include "harness/plugin_loader.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

using serve_main_fn = int (*)(const char*, int, const char*, const char*, const char*, const char*);

int serve(const std::string& host, int port, const std::string& db, const std::string& jobs_dir, const std::string& token,
          const std::string& expectations_dir) {
  api::check_history_if_present(db);
  const auto path = aisp_module_path("libaisp_serve.so");
  AISP_EXPECTS(std::filesystem::is_regular_file(path), "serve: the HTTP module " + path + " is missing (build the aisp_serve target)");
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    const char* why = dlerror();
    AISP_EXPECTS(false, "serve: cannot load " + path + ": " + (why != nullptr ? why : "unknown error") +
                            " (it needs Debian's libcpp-httplib0.11)");
  }
  const auto serve_main = reinterpret_cast<serve_main_fn>(dlsym(module, "aisp_serve_main"));
  AISP_EXPECTS(serve_main != nullptr, "serve: " + path + " is not aisp's serve module");
  return serve_main(host.c_str(), port, db.c_str(), jobs_dir.c_str(), token.c_str(), expectations_dir.c_str());
}

}  // namespace

void add_serve_command(CLI::App& app, outcome& result) {
  auto* command = app.add_subcommand("serve",
                                     "Serve the results over HTTP: a dashboard (/) and a versioned JSON API (/api/v1) over\n"
                                     "the history, the targets, the validity matrix and the measured ceilings; with --token,\n"
                                     "runs started and stopped as jobs. Binds to 127.0.0.1 unless --host says otherwise.");
  auto host = std::make_shared<std::string>("127.0.0.1");
  auto port = std::make_shared<int>(8321);
  auto db = std::make_shared<std::string>(default_history_db());
  auto jobs_dir = std::make_shared<std::string>(artifacts_root());
  auto token = std::make_shared<std::string>();
  auto expectations_dir = std::make_shared<std::string>("expectations");
  command->add_option("--host", *host, "the address to listen on (default 127.0.0.1: this machine only)");
  command->add_option("--port", *port, "the port (default 8321; 0: any free port, printed at start)")->check(CLI::Range(0, 65535));
  command->add_option("--db", *db, "the history database (default $AISP_DB, else $AISP_ARTIFACTS/aisp.db, else artifacts/aisp.db, as the bench commands)");
  command->add_option("--jobs-dir", *jobs_dir, "where runs started through the API keep their artifacts (default artifacts)");
  command->add_option("--token", *token,
                      "a secret that POST /api/v1/jobs and DELETE need as 'Authorization: Bearer <token>'; without it "
                      "the server is read-only");
  command->add_option("--expectations-dir", *expectations_dir,
                      "where <hardware>.json expectations live, for the history's bands (default expectations)");
  command->footer(
      "Examples:\n"
      "  aisp serve                                   # read-only: open http://127.0.0.1:8321/\n"
      "  aisp serve --token \"$(openssl rand -hex 16)\"  # and runs: POST /api/v1/jobs {\"targets\": \"labs/host\"}\n"
      "  curl -s 127.0.0.1:8321/api/v1/runs?limit=5\n"
      "See docs/serve.md.");
  command->callback([=, &result] { result.exit_code = serve(*host, *port, *db, *jobs_dir, *token, *expectations_dir); });
}

}  // namespace aisp::cli
