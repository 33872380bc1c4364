#include "runner/launch_judge.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runner/remote_worker.hpp"

namespace aisp {

using nlohmann::json;

std::string launch_rank_dir(const std::string& artifacts_base, int launch_rank) {
  return fmt::format("{}/launch-rank-{}", artifacts_base, launch_rank);
}

launch_judge::launch_judge(const launch_position& self, const rendezvous_address& at, double connect_timeout_s,
                           launch_rank_info own, const std::string& artifacts_base)
    : self_(self), at_(at), connect_timeout_s_(connect_timeout_s), listener_(listen_for_ranks(at)) {
  ranks_.resize(static_cast<std::size_t>(self.size));
  for (int r = 0; r < self.size; ++r) ranks_[static_cast<std::size_t>(r)].launch_rank = -1;
  own.launch_rank = 0;
  ranks_[0] = own;
  await_rank_hosts(connect_timeout_s);
  for (auto& [r, c] : controls_) {
    c.channel.write_all(json{{"op", "welcome"}, {"artifacts_base", artifacts_base}}.dump() + "\n");
  }
}

launch_judge::~launch_judge() {
  for (auto& [r, c] : controls_) c.connection.shut();  // rank hosts see the judge go: they exit non-zero
}

void launch_judge::await_rank_hosts(double connect_timeout_s) {
  const auto deadline = deadline_in(connect_timeout_s);
  while (static_cast<int>(controls_.size()) < self_.size - 1) {
    socket_fd connection = accept_until(listener_, deadline);
    if (!connection.valid()) {
      std::vector<int> missing;
      for (int r = 1; r < self_.size; ++r) {
        if (!controls_.contains(r)) missing.push_back(r);
      }
      throw std::runtime_error(fmt::format(
          "launch rank{} {} of {} did not reach the rendezvous {} within {:g} s (started? the same --rendezvous or "
          "MASTER_ADDR/MASTER_PORT on every rank? a firewall?)",
          missing.size() > 1 ? "s" : "", fmt::join(missing, ", "), self_.size, at_.text(), connect_timeout_s));
    }
    line_channel channel(connection.get(), connection.get());
    std::string line;
    if (channel.read_line(line, deadline_in(10)) != line_channel::outcome::line) continue;
    const auto hello = json::parse(line, nullptr, false);
    if (!hello.is_object() || hello.value("hello", "") != "rank_host") continue;  // not ours, or a stray worker
    const int r = hello.value("launch_rank", -1);
    const int size = hello.value("launch_size", -1);
    if (size != self_.size)
      throw std::runtime_error(fmt::format("launch rank {} ({}) is in a launch of {} processes, launch rank 0 in one of {}: "
                                           "they were not started together",
                                           r, hello.value("host", "?"), size, self_.size));
    if (r <= 0 || r >= self_.size || controls_.contains(r))
      throw std::runtime_error(fmt::format("two processes on the rendezvous {} say they are launch rank {}", at_.text(), r));
    auto& info = ranks_[static_cast<std::size_t>(r)];
    info = {r, hello.value("local_rank", 0), hello.value("host", "?"), hello.value("device", 0), hello.value("gpu_count", 0),
            hello.value("pid", 0L)};
    controls_.emplace(r, control{std::move(connection), channel});
  }
}

int launch_judge::await_shares() {
  int worst = 0;
  for (auto& [r, c] : controls_) {
    if (!share_exit_codes_.contains(r)) {
      std::string line;
      json message = json::object();
      // A share may take as long as a suite: no deadline, only the rank host's end.
      while (message.value("op", "") != "share_done" &&
             c.channel.read_line(line, deadline_in(1e8)) == line_channel::outcome::line) {
        message = json::parse(line, nullptr, false);
        if (!message.is_object()) message = json::object();
      }
      const bool judged = message.value("op", "") == "share_done";
      if (!judged)
        std::fprintf(stderr, "aisp: launch rank %d (%s) went away while it judged its share of the pairs\n", r,
                     rank(r).host.c_str());
      share_exit_codes_[r] = judged ? message.value("exit_code", 1) : 1;
    }
    worst = std::max(worst, share_exit_codes_[r]);
  }
  return worst;
}

std::unique_ptr<rank_endpoint> launch_judge::start_worker(int launch_rank, const std::string& log_name) {
  const std::lock_guard lock(starting_);
  static_cast<void>(await_shares());  // the rank hosts' GPUs are theirs until their shares end
  const auto& info = rank(launch_rank);
  auto& c = controls_.at(launch_rank);
  const int token = next_token_++;
  const auto gone = [&](const std::string& why) {
    return worker_failure(worker_failure_kind::crash, fmt::format("launch rank {} ({}) {}", launch_rank, info.host, why));
  };
  if (c.channel.peer_gone() ||
      !c.channel.write_all(json{{"op", "spawn"}, {"token", token}, {"log", log_name}}.dump() + "\n"))
    throw gone("is gone: its rank host ended");
  const auto deadline = deadline_in(connect_timeout_s_);
  while (!early_workers_.contains(token)) {
    socket_fd connection = accept_until(listener_, deadline);
    if (!connection.valid()) throw gone(fmt::format("started no worker within {:g} s", connect_timeout_s_));
    line_channel channel(connection.get(), connection.get());
    std::string line;
    if (channel.read_line(line, deadline_in(10)) != line_channel::outcome::line) continue;
    auto hello = json::parse(line, nullptr, false);
    if (!hello.is_object() || hello.value("hello", "") != "worker") continue;
    early_workers_.emplace(hello.value("token", 0), arrived_worker{std::move(connection), channel, hello});
  }
  auto arrived = std::move(early_workers_.at(token));
  early_workers_.erase(token);
  if (arrived.hello.contains("error")) throw gone("could not start a worker: " + arrived.hello.value("error", "?"));
  return std::make_unique<remote_worker>(std::move(arrived.connection), arrived.channel,
                                         remote_place{launch_rank, info.host, arrived.hello.value("log", log_name)}, arrived.hello.value("pid", 1));
}

void launch_judge::finish(int exit_code) {
  for (auto& [r, c] : controls_) c.channel.write_all(json{{"op", "done"}, {"exit_code", exit_code}}.dump() + "\n");
}

json launch_judge::to_json() const {
  json ranks = json::array();
  for (const auto& info : ranks_) {
    ranks.push_back({{"launch_rank", info.launch_rank}, {"local_rank", info.local_rank}, {"host", info.host},
                     {"device", info.device}, {"gpu_count", info.gpu_count}, {"pid", info.pid}});
  }
  json shares = json::object();
  for (const auto& [r, code] : share_exit_codes_) shares[std::to_string(r)] = code;
  return {{"launch_size", self_.size}, {"source", self_.source}, {"rendezvous", at_.text()}, {"ranks", std::move(ranks)},
          {"share_exit_codes", std::move(shares)}};
}

}  // namespace aisp
