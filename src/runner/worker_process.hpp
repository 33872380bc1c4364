// The parent's handle on one worker process: spawn, request with a deadline, kill.
#pragma once

#include <sys/types.h>

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

class worker_process {
 public:
  // Starts `executable worker`, its stderr appended to `log_path`.
  worker_process(const std::string& executable, const std::string& log_path);
  ~worker_process();
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Sends one request and waits at most `timeout_s` for the answer. An {"ok":false} answer,
  // a timeout (the worker is killed) or a dead worker throw worker_failure.
  nlohmann::json request(const nlohmann::json& message, double timeout_s);
  // Asks the worker to exit, then reaps it (killing it if it does not leave in time).
  void shutdown();
  [[nodiscard]] pid_t pid() const { return pid_; }
  // Calls the worker's sandbox denied so far (Note [worker sandbox]), as its last answer listed
  // them: [{"what", "code", "count"}]; empty when none.
  [[nodiscard]] const nlohmann::json& sandbox_denials() const { return sandbox_denials_; }
  // CUPTI calls that switch the device audit off, made outside the audit (Note [audit tampering]).
  [[nodiscard]] const std::vector<std::string>& audit_tampering() const { return audit_tampering_; }

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
