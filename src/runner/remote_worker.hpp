// Note [launch]: the judge's handle on a worker that a rank host started on another launch rank.
// The worker protocol runs over one TCP connection to that rank host, which relays it to the
// worker's own socket pair (runner/worker_relay.hpp): the worker and its sandbox are as on the
// judge's host, and the output files the worker writes there come back with the answer.
#pragma once

#include <string>
#include <vector>

#include "runner/rendezvous.hpp"
#include "runner/worker_process.hpp"

namespace aisp {

// Where the worker runs, for messages.
struct remote_place {
  int launch_rank = 0;
  std::string host;
  std::string log_path;  // on that host
};

class remote_worker final : public rank_endpoint {
 public:
  // `channel` reads `connection` and may hold bytes already read past the hello line.
  remote_worker(socket_fd connection, line_channel channel, remote_place place, pid_t remote_pid);
  ~remote_worker() override;
  remote_worker(const remote_worker&) = delete;
  remote_worker& operator=(const remote_worker&) = delete;

  nlohmann::json request(const nlohmann::json& message, double timeout_s) override;
  void send(const nlohmann::json& message) override;
  nlohmann::json receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) override;
  void kill_now() override;
  void shutdown() override;
  // The worker's pid on its host while it is reachable; -1 once it died or was ended.
  [[nodiscard]] pid_t pid() const override { return pid_; }
  [[nodiscard]] const nlohmann::json& sandbox_denials() const override { return sandbox_denials_; }
  [[nodiscard]] const std::vector<std::string>& audit_tampering() const override { return audit_tampering_; }

 private:
  // One answer line (a partial record or the answer), parsed, its payload taken.
  nlohmann::json receive_one(const std::string& op, double timeout_s, const std::function<bool()>& give_up);
  [[nodiscard]] std::string where() const;
  // Writes the files that follow an answer (its "payload") where the answer says they are.
  void take_payload(const nlohmann::json& reply, const std::string& op);

  socket_fd connection_;
  line_channel channel_;
  remote_place place_;
  pid_t pid_;
  nlohmann::json sandbox_denials_ = nlohmann::json::array();
  std::vector<std::string> audit_tampering_;
};

// A relayed failure's kind, by name ("crash", "sandbox", "timeout", ...); crash when unknown.
[[nodiscard]] worker_failure_kind worker_failure_kind_named(const std::string& name);

}  // namespace aisp
