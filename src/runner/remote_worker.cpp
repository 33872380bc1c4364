#include "runner/remote_worker.hpp"

#include <fstream>

#include <fmt/format.h>

namespace aisp {

worker_failure_kind worker_failure_kind_named(const std::string& name) {
  for (const auto kind : {worker_failure_kind::timeout, worker_failure_kind::crash, worker_failure_kind::cuda,
                          worker_failure_kind::contract, worker_failure_kind::exception, worker_failure_kind::sandbox,
                          worker_failure_kind::unsupported, worker_failure_kind::interrupted}) {
    if (worker_failure_name(kind) == name) return kind;
  }
  return worker_failure_kind::crash;
}

remote_worker::remote_worker(socket_fd connection, line_channel channel, remote_place place, pid_t remote_pid)
    : connection_(std::move(connection)), channel_(std::move(channel)), place_(std::move(place)), pid_(remote_pid) {}

remote_worker::~remote_worker() { kill_now(); }

std::string remote_worker::where() const { return fmt::format("launch rank {} ({})", place_.launch_rank, place_.host); }

void remote_worker::kill_now() {
  // The rank host kills the worker when its connection ends (runner/worker_relay.cpp).
  connection_.shut();
  pid_ = -1;
}

nlohmann::json remote_worker::request(const nlohmann::json& message, double timeout_s) {
  send(message);
  return receive(message.value("op", "?"), timeout_s, {});
}

void remote_worker::send(const nlohmann::json& message) {
  const std::string op = message.value("op", "?");
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, fmt::format("the worker on {} is not running", where()));
  if (!channel_.write_all(message.dump() + "\n")) {
    pid_ = -1;
    throw worker_failure(worker_failure_kind::crash, fmt::format("{} went away before '{}' (its worker log: {}:{})", where(), op,
                                                                 place_.host, place_.log_path));
  }
}

nlohmann::json remote_worker::receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) {
  return receive_joining_partials(timeout_s, [&](double left_s) { return receive_one(op, left_s, give_up); });
}

nlohmann::json remote_worker::receive_one(const std::string& op, double timeout_s, const std::function<bool()>& give_up) {
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, fmt::format("the worker on {} is not running", where()));
  std::string line;
  switch (channel_.read_line(line, deadline_in(timeout_s), give_up, give_up ? 50 : 1000)) {
    case line_channel::outcome::line: break;
    case line_channel::outcome::timed_out:
      kill_now();
      throw worker_failure(worker_failure_kind::timeout,
                           fmt::format("worker on {} gave no answer to '{}' within {:.1f} s and was killed", where(), op, timeout_s));
    case line_channel::outcome::gave_up:
      kill_now();
      throw worker_failure(worker_failure_kind::crash, fmt::format("worker on {} was ended during '{}': a peer rank failed", where(), op));
    case line_channel::outcome::interrupted:  // Note [interrupted runs]
      kill_now();
      throw worker_failure(worker_failure_kind::interrupted, fmt::format("the run was interrupted during '{}'", op));
    case line_channel::outcome::closed:
      pid_ = -1;
      throw worker_failure(worker_failure_kind::crash, fmt::format("{} went away during '{}' (its worker log: {}:{})", where(), op,
                                                                   place_.host, place_.log_path));
  }
  const auto reply = nlohmann::json::parse(line, nullptr, false);
  if (reply.is_object() && reply.value("relay_failure", false)) {  // the worker died there, or its sandbox killed it
    pid_ = -1;
    throw worker_failure(worker_failure_kind_named(reply.value("kind", "crash")),
                         fmt::format("{} (on {})", reply.value("message", "the worker failed"), where()));
  }
  auto parsed = parse_worker_reply(line, op, sandbox_denials_, audit_tampering_);
  take_payload(parsed, op);
  parsed.erase("payload");
  return parsed;
}

void remote_worker::take_payload(const nlohmann::json& reply, const std::string& op) {
  for (const auto& file : reply.value("payload", nlohmann::json::array())) {
    const auto path = file.at("path").get<std::string>();
    std::string bytes;
    if (!channel_.read_exact(bytes, file.at("bytes").get<std::size_t>(), deadline_in(600))) {
      pid_ = -1;
      throw worker_failure(worker_failure_kind::crash, fmt::format("{} went away while sending the files of '{}'", where(), op));
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.good()) throw worker_failure(worker_failure_kind::exception, "cannot write " + path + ", a file of " + where());
  }
}

void remote_worker::shutdown() {
  if (pid_ <= 0) return;
  try {
    request({{"op", "exit"}}, 5.0);
  } catch (const worker_failure&) {
  }
  kill_now();
}

}  // namespace aisp
