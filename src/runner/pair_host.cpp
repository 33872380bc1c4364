#include "runner/pair_host.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "harness/plugin_loader.hpp"
#include "runner/pair_declaration.hpp"
#include "runner/worker_process.hpp"
#include "runner/worker_protocol.hpp"
#include "support/base64_codec.hpp"

namespace aisp {
namespace {

using nlohmann::json;

// Note [untrusted pairs]
// A pair's code that runs in the judge can do anything the judge can: a red team's plugin
// stopped the baseline's workers from a static initializer (2026-12-03, Note [stopped workers]),
// and a plugin's atexit handler rewrote results.json from "slower" to "faster" and set the exit
// status to 0 (2026-12-03, this session's own probe). No check inside the judge can stand
// against code that shares its address space. So the judge loads no user plugin. It starts one
// worker as the pair host, confined by the workers' sandbox (Note [worker sandbox]: no signals
// to other processes, no re-scheduling them, no new processes unless an executable pair's
// reference needs them), asks it to load each plugin, and builds its own copy of each pair from
// the declaration that comes back (pair_declaration.hpp). The copy's functions (buffer sizes,
// work, items, passes, collectives, the fp64 reference) are requests to the host. Between
// requests the host is stopped (SIGSTOP) and every process under it killed (it is their
// subreaper: a daemon an executable pair's reference program double-forked computed a
// candidate's answers beside its worker, a red team's 4.8x, 2026-12-03), so nothing of a
// pair's code runs while a variant is timed. The host sees no GPU (CUDA_VISIBLE_DEVICES empty):
// a kernel it launched would run on while it is stopped. Workers load the plugin themselves, as
// before. Built-in pairs (the lab's) are aisp's own code and stay in the judge.
// A load imports a pair file and declares its pairs: a pair file that blocks at import (a
// user's walkthrough, 2026-12-04) is ended here, with the reason, not waited on for 10 minutes.
constexpr double load_timeout_s = 180;
constexpr double answer_timeout_s = 3600;  // a reference: fp64, on the host, at validation sizes

class pair_host {
 public:
  explicit pair_host(bool allow_subprocesses)
      : log_path_((std::filesystem::temp_directory_path() / fmt::format("aisp_pair_host_{}.log", getpid())).string()),
        // Killed with the judge's thread that started it (the CLI's main thread): a stopped host
        // would not see its channel close.
        worker_(current_executable(), log_path_, true, allow_subprocesses, {"CUDA_VISIBLE_DEVICES="}) {}

  ~pair_host() {
    if (worker_.pid() > 0) kill(worker_.pid(), SIGCONT);
    worker_.shutdown();
    std::error_code ignored;
    std::filesystem::remove(log_path_, ignored);
  }

  json ask(const json& request, double timeout_s) {
    const std::lock_guard<std::mutex> one_at_a_time(mutex_);
    if (worker_.pid() > 0) kill(worker_.pid(), SIGCONT);
    const auto stop = [this] {
      if (worker_.pid() <= 0) return;
      kill(worker_.pid(), SIGSTOP);
      kill_descendants(worker_.pid());
    };
    try {
      auto reply = worker_.request(request, timeout_s);
      stop();
      return reply;
    } catch (...) {
      stop();
      throw;
    }
  }

  json evaluate(const std::string& target, const workload& work) {
    const std::string key = target + "|" + std::to_string(static_cast<int>(work.kind)) + "|" + work.describe();
    {
      const std::lock_guard<std::mutex> cached(cache_mutex_);
      if (const auto found = evaluations_.find(key); found != evaluations_.end()) return found->second;
    }
    auto evaluation = ask({{"op", "evaluate"}, {"target", target}, {"workload", protocol::workload_to_json(work)}}, answer_timeout_s)
                          .at("evaluation");
    const std::lock_guard<std::mutex> cached(cache_mutex_);
    return evaluations_.emplace(key, std::move(evaluation)).first->second;
  }

  void reference(const pair& declared, reference_io& io) {
    json inputs = json::object();
    json outputs = json::object();
    for (const auto& b : declared.buffers()) {
      if (b.role == buffer_role::input) {
        const auto values = io.input(b.name);
        inputs[b.name] = base64_encode(values.data(), values.size() * sizeof(double));
      }
      if (b.role == buffer_role::output) outputs[b.name] = io.output(b.name).size();
    }
    const auto reply = ask({{"op", "reference"}, {"target", declared.target()}, {"workload", protocol::workload_to_json(io.work())},
                            {"world", io.world_size()}, {"inputs", inputs}, {"outputs", outputs}},
                           answer_timeout_s);
    for (const auto& [name, text] : reply.at("outputs").items()) {
      const auto bytes = base64_decode(text.get<std::string>());
      const auto out = io.output(name);
      AISP_EXPECTS(bytes.size() == out.size_bytes(), declared.target() + ": the reference's output " + name + " came back another size");
      std::memcpy(out.data(), bytes.data(), bytes.size());
    }
  }

  // A load that ended the host, in the user's words.
  [[nodiscard]] std::string how_it_ended(const worker_failure& failure) const {
    const auto status = worker_.end_status();
    if (failure.kind() == worker_failure_kind::sandbox) return std::string("was stopped by the pair host's sandbox (") + failure.what() + ")";
    if (status && WIFSIGNALED(*status))
      return fmt::format("crashed while loading (signal {}, {})", WTERMSIG(*status), strsignal(WTERMSIG(*status)));
    if (status && WIFEXITED(*status)) return fmt::format("ended the process while loading (exit {})", WEXITSTATUS(*status));
    return std::string("ended the pair host while loading (") + failure.what() + ")";
  }

 private:
  std::string log_path_;
  worker_process worker_;
  std::mutex mutex_;
  std::mutex cache_mutex_;
  std::map<std::string, json> evaluations_;
};

// What the user named: the pair files behind a bridge, else the library.
std::string named(const std::string& path) {
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "?");
  };
  switch (kind_of_plugin(path)) {
    case plugin_kind::python_bridge: return "--python " + variable("AISP_PYTHON_PAIRS");
    case plugin_kind::exec_bridge: return "--exec " + variable("AISP_EXEC_PAIRS");
    case plugin_kind::library: break;
  }
  return "plugin '" + path + "'";
}

loaded_plugin plugin_of(const json& j) {
  loaded_plugin plugin{.path = j.at("path").get<std::string>(), .optimized = std::nullopt, .targets = j.at("targets").get<std::vector<std::string>>()};
  if (!j.at("optimized").is_null()) plugin.optimized = j.at("optimized").get<bool>();
  plugin.python_bridge = j.at("python_bridge").get<bool>();
  plugin.exec_bridge = j.at("exec_bridge").get<bool>();
  return plugin;
}

}  // namespace

void host_user_plugins(const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  bool any_exec = false;
  for (const auto& path : paths) any_exec = any_exec || kind_of_plugin(path) == plugin_kind::exec_bridge;
  // One host for the process's life: the judge's copies call it until the run ends.
  static std::unique_ptr<pair_host> host;
  if (!host) host = std::make_unique<pair_host>(any_exec);
  static std::set<std::string> loaded;  // the same file named twice is loaded once
  for (const auto& path : paths) {
    std::error_code error;
    AISP_EXPECTS(std::filesystem::is_regular_file(path, error), "plugin '" + path + "': no such file");
    if (!loaded.insert(std::filesystem::weakly_canonical(path, error).string()).second) continue;
    json reply;
    try {
      reply = host->ask({{"op", "host_load"}, {"plugin", std::filesystem::absolute(path).string()}}, load_timeout_s);
    } catch (const worker_failure& failure) {
      // A contract_error in the load is the plugin's own one-line message; a dead host is its load's doing.
      const bool ordinary = failure.kind() == worker_failure_kind::contract || failure.kind() == worker_failure_kind::exception;
      AISP_EXPECTS(false, ordinary ? std::string(failure.what()) : named(path) + " " + host->how_it_ended(failure) + ": nothing was run");
    }
    auto* shared = host.get();
    for (const auto& declaration : reply.at("pairs")) {
      const auto target = declaration.at("target").get<std::string>();
      pair_functions functions{[shared, target](const workload& work) { return shared->evaluate(target, work); }, {}};
      functions.reference = [shared, target](reference_io& io) { shared->reference(*registry::instance().find(target), io); };
      const std::size_t broken_before = registry::instance().broken().size();
      registry::instance().add(pair_from_declaration(declaration, std::move(functions)));
      AISP_EXPECTS(registry::instance().broken().size() == broken_before,
                   named(path) + ": " + (registry::instance().broken().empty() ? std::string() : registry::instance().broken().back()));
    }
    record_hosted_plugin(plugin_of(reply.at("plugin")));
  }
}

}  // namespace aisp
