// The parent's handle on one worker process: spawn, request with a deadline, kill.
#pragma once

#include <sys/types.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

// Why a worker could not answer: the pair's failure kind in the results.
// unsupported: the run's timing mode cannot time this pair (graph capture refused); the pair is skipped.
enum class worker_failure_kind { timeout, crash, cuda, contract, exception, sandbox, unsupported };

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

class worker_process final : public worker_link {
 public:
  // Starts `executable worker`, its stderr appended to `log_path`.
  worker_process(const std::string& executable, const std::string& log_path);
  ~worker_process() override;
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  nlohmann::json request(const nlohmann::json& message, double timeout_s) override;
  // request() in two halves, so that a group of workers can all be asked before any answers
  // (the ranks of a collective wait for each other).
  void send(const nlohmann::json& message);
  // `give_up`, checked every 50 ms while waiting: when it turns true the worker is killed and
  // the wait ends in a worker_failure (a peer rank failed; this one would wait forever).
  nlohmann::json receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up = {});
  // Kills the worker now (a rank whose peers failed would wait in a collective forever).
  void kill_now() { kill_and_reap(); }
  void shutdown() override;
  [[nodiscard]] pid_t pid() const override { return pid_; }
  [[nodiscard]] const nlohmann::json& sandbox_denials() const override { return sandbox_denials_; }
  [[nodiscard]] const std::vector<std::string>& audit_tampering() const override { return audit_tampering_; }

 private:
  [[noreturn]] void fail_dead(const std::string& while_doing);
  void kill_and_reap();
  [[nodiscard]] std::string log_tail() const;

  std::string log_path_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::string pending_;
  nlohmann::json sandbox_denials_ = nlohmann::json::array();
  std::vector<std::string> audit_tampering_;
};

// The path of the running executable, for spawning workers of the same build.
[[nodiscard]] std::string current_executable();

}  // namespace aisp
