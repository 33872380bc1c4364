// The parent's handle on one worker process: spawn, request with a deadline, kill.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/line_channel.hpp"

namespace aisp {

// Why a worker could not answer: the pair's failure kind in the results.
// unsupported: the run's timing mode cannot time this pair (graph capture refused); the pair is skipped.
enum class worker_failure_kind { timeout, crash, cuda, contract, exception, sandbox, unsupported, interrupted };

[[nodiscard]] std::string_view worker_failure_name(worker_failure_kind kind);

class worker_failure : public std::runtime_error {
 public:
  worker_failure(worker_failure_kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] worker_failure_kind kind() const { return kind_; }

 private:
  worker_failure_kind kind_;
};

// What the judge talks to for one variant slot: one worker process, or the workers of every
// rank of a multi-GPU pair answering as one (runner/rank_group.hpp).
class worker_link {
 public:
  virtual ~worker_link() = default;
  // Sends one request and waits at most `timeout_s` for the answer. An {"ok":false} answer,
  // a timeout (the worker is killed) or a dead worker throw worker_failure.
  virtual nlohmann::json request(const nlohmann::json& message, double timeout_s) = 0;
  // Asks the worker to exit, then reaps it (killing it if it does not leave in time).
  virtual void shutdown() = 0;
  // -1 once a worker died or was reaped.
  [[nodiscard]] virtual pid_t pid() const = 0;
  // Calls the worker's sandbox denied so far (Note [worker sandbox]), as its last answer listed
  // them: [{"what", "code", "count"}]; empty when none.
  [[nodiscard]] virtual const nlohmann::json& sandbox_denials() const = 0;
  // CUPTI calls that switch the device audit off, made outside the audit (Note [audit tampering]).
  [[nodiscard]] virtual const std::vector<std::string>& audit_tampering() const = 0;
};

// One rank's worker as a rank_group drives it: a local process (worker_process) or one started
// by a rank host on another launch rank (remote_worker, Note [launch]).
class rank_endpoint : public worker_link {
 public:
  // request() in two halves, so that a group of workers can all be asked before any answers
  // (the ranks of a collective wait for each other).
  virtual void send(const nlohmann::json& message) = 0;
  // `give_up`, checked every 50 ms while waiting: when it turns true the worker is killed and
  // the wait ends in a worker_failure (a peer rank failed; this one would wait forever).
  virtual nlohmann::json receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) = 0;
  // Kills the worker now (a rank whose peers failed would wait in a collective forever).
  virtual void kill_now() = 0;
};

// One answer line of a worker to `op`, parsed: records its sandbox denials and audit tampering
// into the two lists, and throws worker_failure for {"ok": false} or a malformed line.
nlohmann::json parse_worker_reply(const std::string& line, const std::string& op, nlohmann::json& sandbox_denials,
                                  std::vector<std::string>& audit_tampering);

// Note [verified after the call]: a worker sends each verified sample's record the moment it is
// taken ({"partial": "verified", "record": ...}), before any later call of the variant (which
// shares its process) could touch it. Whether an answer line is one of those.
[[nodiscard]] bool is_partial_reply(const std::string& line);
// The answer to a request: `one_reply(seconds left)` until a line that is not partial, the
// partial records joined to it under their key, in the order they came.
[[nodiscard]] nlohmann::json receive_joining_partials(double timeout_s, const std::function<nlohmann::json(double left_s)>& one_reply);

class worker_process final : public rank_endpoint {
 public:
  // Starts `executable worker`, its stderr appended to `log_path`. `end_with_parent`: the worker
  // is killed when the thread that started it ends (a rank host's relay, Note [launch]: a rank
  // host killed mid-run leaves no worker behind).
  // `allow_subprocesses` (Note [compilers in the sandbox]): its sandbox lets it start processes.
  // `environment`: NAME=value entries set for it, over the judge's own.
  worker_process(const std::string& executable, const std::string& log_path, bool end_with_parent = false,
                 bool allow_subprocesses = false, const std::vector<std::string>& environment = {});
  ~worker_process() override;
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  nlohmann::json request(const nlohmann::json& message, double timeout_s) override;
  void send(const nlohmann::json& message) override;
  nlohmann::json receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) override;
  // The answer line as the worker wrote it (a rank host relays it unparsed, Note [launch]);
  // throws worker_failure when the worker dies, times out or `give_up` turns true.
  std::string receive_line(const std::string& op, double timeout_s, const std::function<bool()>& give_up);
  void kill_now() override { kill_and_reap(); }
  void shutdown() override;
  [[nodiscard]] pid_t pid() const override { return pid_; }
  // The variant this worker runs ("baseline"), which its own errors then name.
  void name_variant(std::string label) { variant_label_ = std::move(label); }
  [[nodiscard]] const nlohmann::json& sandbox_denials() const override { return sandbox_denials_; }
  [[nodiscard]] const std::vector<std::string>& audit_tampering() const override { return audit_tampering_; }

  // How the process ended (a waitpid status) once a request found it dead; nullopt before.
  [[nodiscard]] std::optional<int> end_status() const { return end_status_; }

 private:
  std::optional<int> end_status_;
  [[noreturn]] void fail_dead(const std::string& while_doing);
  void kill_and_reap();
  [[nodiscard]] std::string log_tail() const;

  // After a waitpid of the worker: its process group leaves the live ones.
  void forget_reaped();

  std::string log_path_;
  std::string variant_label_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  line_channel channel_;
  nlohmann::json sandbox_denials_ = nlohmann::json::array();
  std::vector<std::string> audit_tampering_;
};

// The path of the running executable, for spawning workers of the same build.
[[nodiscard]] std::string current_executable();

// Every process under `pid`, each stopped before its children are listed, then killed: an
// executable pair's program and whatever it left (the worker and the pair host are their
// subreapers, so orphans and double-forked daemons are their children too).
void kill_descendants(pid_t pid);

}  // namespace aisp
