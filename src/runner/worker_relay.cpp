#include "runner/worker_relay.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "runner/rendezvous.hpp"
#include "runner/worker_process.hpp"

namespace aisp {
namespace {

using nlohmann::json;

// The worker's output files of one `outputs` answer, read back and listed under the judge's
// paths; the answer names the judge's paths too.
std::string attach_outputs(json& reply, const std::string& local_prefix, const std::string& judge_prefix) {
  std::string bytes;
  json payload = json::array();
  for (auto& [name, path_json] : reply["files"].items()) {
    const auto local = path_json.get<std::string>();
    std::ifstream in(local, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    in.close();
    std::filesystem::remove(local);
    const std::string judge_path = judge_prefix + local.substr(std::min(local.size(), local_prefix.size()));
    payload.push_back({{"path", judge_path}, {"bytes", content.str().size()}});
    bytes += content.str();
    path_json = judge_path;
  }
  reply["payload"] = std::move(payload);
  return bytes;
}

json failure_line(const worker_failure& failure) {
  return {{"ok", false}, {"relay_failure", true}, {"kind", worker_failure_name(failure.kind())}, {"message", failure.what()}};
}

}  // namespace

json relay_worker(const rendezvous_address& judge, const relay_job& job) {
  json record = {{"token", job.token}, {"log", job.log_path}};
  std::string why;
  socket_fd connection = connect_until(judge, deadline_in(job.connect_timeout_s), why);
  if (!connection.valid()) {
    record["ended"] = "could not reach the judge: " + why;
    return record;
  }
  line_channel to_judge(connection.get(), connection.get());
  std::filesystem::create_directories(std::filesystem::path(job.log_path).parent_path());
  std::filesystem::create_directories(job.scratch_dir);
  std::unique_ptr<worker_process> worker;
  try {
    worker = std::make_unique<worker_process>(job.executable, job.log_path, true);
  } catch (const worker_failure& failure) {
    to_judge.write_all(json{{"hello", "worker"}, {"token", job.token}, {"error", failure.what()}}.dump() + "\n");
    record["ended"] = std::string("could not start: ") + failure.what();
    return record;
  }
  record["pid"] = worker->pid();
  if (!to_judge.write_all(json{{"hello", "worker"}, {"token", job.token}, {"pid", worker->pid()}, {"log", job.log_path}}.dump() + "\n")) {
    record["ended"] = "the judge went away";
    return record;
  }
  const auto judge_gone = [&to_judge] { return to_judge.peer_gone(); };
  int requests = 0;
  while (true) {
    std::string line;
    if (to_judge.read_line(line, deadline_in(1e8)) != line_channel::outcome::line) {
      record["ended"] = "the judge ended it";  // its connection closed: a kill, or the judge is gone
      break;
    }
    auto request = json::parse(line, nullptr, false);
    const std::string op = request.is_object() ? request.value("op", "?") : "?";
    std::string judge_prefix;
    std::string local_prefix;
    if (op == "outputs") {  // the judge's path may not exist here: write here, send the bytes
      judge_prefix = request.at("prefix").get<std::string>();
      local_prefix = fmt::format("{}/w{}.{}", job.scratch_dir, job.token, requests);
      request["prefix"] = local_prefix;
    }
    ++requests;
    std::string answer;
    try {
      worker->send(request.is_discarded() ? json(line) : request);
      answer = worker->receive_line(op, 1e8, judge_gone);
      while (is_partial_reply(answer)) {  // Note [verified after the call]: relayed as they come
        if (!to_judge.write_all(answer + "\n")) break;
        answer = worker->receive_line(op, 1e8, judge_gone);
      }
    } catch (const worker_failure& failure) {
      if (judge_gone()) {
        record["ended"] = "the judge ended it";
        break;
      }
      to_judge.write_all(failure_line(failure).dump() + "\n");
      record["ended"] = failure.what();
      break;
    }
    std::string payload;
    if (op == "outputs") {
      auto reply = json::parse(answer, nullptr, false);
      if (reply.is_object() && reply.value("ok", false) && reply.contains("files")) {
        payload = attach_outputs(reply, local_prefix, judge_prefix);
        answer = reply.dump();
      }
    }
    if (!to_judge.write_all(answer + "\n" + payload)) {
      record["ended"] = "the judge went away";
      break;
    }
    if (op == "exit") {
      record["ended"] = "exit";
      break;
    }
  }
  // A worker the judge ended may wait in a collective for a peer that is gone: killed, not asked.
  if (record["ended"] == "the judge ended it") worker->kill_now();
  else worker->shutdown();
  return record;
}

}  // namespace aisp
