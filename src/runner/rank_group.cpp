#include "runner/rank_group.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <fstream>

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/nccl.hpp"
#include "runner/launch_judge.hpp"
#include "runner/worker_protocol.hpp"

namespace aisp {

std::string new_nccl_unique_id() {
  ncclUniqueId id{};
  AISP_NCCL_CHECK(nccl().get_unique_id(&id));
  std::string hex;
  for (const char byte : id.internal) hex += fmt::format("{:02x}", static_cast<unsigned char>(byte));
  return hex;
}

std::string multi_gpu_absence(const pair& declared, int first_device, int gpu_count) {
  if (first_device + declared.gpus() > gpu_count)
    return fmt::format("needs {} GPUs (devices {}..{}); this machine has {}", declared.gpus(), first_device,
                       first_device + declared.gpus() - 1, gpu_count);
  std::string why;
  if (nccl_or_null(why) == nullptr) return why;
  return "";
}

std::string launched_absence(const pair& declared, const launch_judge& launch) {
  if (declared.gpus() != launch.size())
    return fmt::format("world size {} is not the launch size {}: launch it with {} processes (mpirun -np {}, srun -n {})",
                       declared.gpus(), launch.size(), declared.gpus(), declared.gpus(), declared.gpus());
  if (declared.where() != backend::cuda) return "";
  for (int r = 0; r < launch.size(); ++r) {
    const auto& info = launch.rank(r);
    if (info.device >= info.gpu_count)
      return fmt::format("launch rank {} ({}) needs GPU {}; it has {}", r, info.host, info.device, info.gpu_count);
  }
  std::string why;
  if (nccl_or_null(why) == nullptr) return why;
  return "";
}

nlohmann::json rank_topology(const pair& declared, int first_device, const launch_judge* launch) {
  nlohmann::json topology = {{"world_size", declared.gpus()}};
  if (launch != nullptr) {  // across hosts: where each rank ran; peer access is a question within one host
    nlohmann::json hosts = nlohmann::json::array();
    nlohmann::json devices = nlohmann::json::array();
    for (int r = 0; r < declared.gpus(); ++r) {
      hosts.push_back(launch->rank(r).host);
      devices.push_back(launch->rank(r).device);
    }
    topology["hosts"] = std::move(hosts);
    if (declared.where() == backend::cuda) topology["devices"] = std::move(devices);
    topology["launch"] = launch->to_json();
    return topology;
  }
  if (declared.where() != backend::cuda) return topology;
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json peer_access = nlohmann::json::array();
  for (int r = 0; r < declared.gpus(); ++r) {
    devices.push_back(first_device + r);
    nlohmann::json row = nlohmann::json::array();
    for (int q = 0; q < declared.gpus(); ++q) {
      int can = q == r ? 1 : 0;
      if (q != r && cudaDeviceCanAccessPeer(&can, first_device + r, first_device + q) != cudaSuccess) can = 0;
      row.push_back(can == 1);
    }
    peer_access.push_back(std::move(row));
  }
  topology["devices"] = std::move(devices);
  topology["peer_access"] = std::move(peer_access);
  return topology;
}

rank_group::rank_group(const pair& declared, const std::string& executable, const std::string& log_stem, int first_device,
                       launch_judge* launch, const std::string& log_name)
    : declared_(declared) {
  // NVLink multicast can put a shared host's GPUs out of service: never on for aisp's ranks.
  // Rank hosts' workers inherit it from the rank host (runner/rank_host.cpp sets it too).
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  for (int r = 0; r < declared.gpus(); ++r) {
    if (launch != nullptr && r > 0) {
      ranks_.push_back(launch->start_worker(r, fmt::format("{}.rank{}.log", log_name, r)));
      devices_.push_back(launch->rank(r).device);
    } else {
      ranks_.push_back(std::make_unique<worker_process>(executable, fmt::format("{}.rank{}.log", log_stem, r)));
      devices_.push_back(first_device + r);
    }
  }
}

rank_group::~rank_group() {
  for (auto& rank : ranks_) rank->kill_now();
}

pid_t rank_group::pid() const {
  for (const auto& rank : ranks_) {
    if (rank->pid() <= 0) return -1;
  }
  return ranks_.front()->pid();
}

void rank_group::collect_audit_state() {
  denials_ = nlohmann::json::array();
  for (const auto& rank : ranks_) {
    for (const auto& d : rank->sandbox_denials()) denials_.push_back(d);
    for (const auto& call : rank->audit_tampering()) {
      if (std::find(tampering_.begin(), tampering_.end(), call) == tampering_.end()) tampering_.push_back(call);
    }
  }
}

std::vector<nlohmann::json> rank_group::ask_all(const std::vector<nlohmann::json>& messages, double timeout_s) {
  std::vector<nlohmann::json> replies(ranks_.size());
  std::exception_ptr first;
  std::size_t sent = 0;
  try {
    for (; sent < ranks_.size(); ++sent) ranks_[sent]->send(messages[sent]);
  } catch (...) {
    first = std::current_exception();
  }
  // Every rank's answer awaited at once: the first rank that fails ends the others' waits (they
  // may wait for it in a collective), and its failure is the one reported.
  std::atomic<bool> failed = first != nullptr;
  std::mutex first_lock;
  {
    std::vector<std::jthread> waiting;
    for (std::size_t r = 0; r < sent; ++r) {
      waiting.emplace_back([&, r] {
        try {
          replies[r] = ranks_[r]->receive(messages[r].value("op", "?"), timeout_s, [&failed] { return failed.load(); });
        } catch (...) {
          const std::lock_guard lock(first_lock);
          if (!failed.exchange(true)) first = std::current_exception();
        }
      });
    }
  }
  if (first) {
    for (auto& rank : ranks_) rank->kill_now();
  }
  collect_audit_state();
  if (first) std::rethrow_exception(first);
  return replies;
}

std::vector<nlohmann::json> rank_group::ask_all(const nlohmann::json& message, double timeout_s) {
  return ask_all(std::vector<nlohmann::json>(ranks_.size(), message), timeout_s);
}

nlohmann::json rank_group::init(const nlohmann::json& message, double timeout_s) {
  std::string id;
  if (declared_.where() == backend::cuda) id = new_nccl_unique_id();
  std::vector<nlohmann::json> messages;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    auto m = message;
    m["rank"] = r;
    m["world_size"] = static_cast<int>(ranks_.size());
    m["device"] = devices_[static_cast<std::size_t>(r)];
    if (!id.empty()) m["nccl_id"] = id;
    messages.push_back(std::move(m));
  }
  return ranks::merge_init(ask_all(messages, timeout_s));
}

nlohmann::json rank_group::outputs(const nlohmann::json& message, double timeout_s) {
  const auto prefix = message.at("prefix").get<std::string>();
  std::vector<nlohmann::json> messages;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    auto m = message;
    m["prefix"] = fmt::format("{}.rank{}", prefix, r);
    messages.push_back(std::move(m));
  }
  const auto replies = ask_all(messages, timeout_s);
  auto merged = ranks::merge_call_report(replies);
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, ignored] : replies.front().at("files").items()) {
    const std::string joined = prefix + "." + name + ".bin";
    std::ofstream out(joined, std::ios::binary | std::ios::trunc);
    for (const auto& reply : replies) {
      const auto part = reply.at("files").at(name).get<std::string>();
      std::ifstream in(part, std::ios::binary);
      AISP_EXPECTS(in.good(), "rank output file " + part + " is missing");
      out << in.rdbuf();
      in.close();
      std::remove(part.c_str());
    }
    AISP_EXPECTS(out.good(), "could not write " + joined);
    files[name] = joined;
  }
  merged["files"] = std::move(files);
  return merged;
}

nlohmann::json rank_group::truth(const nlohmann::json& message, double timeout_s) {
  const auto split = ranks::split_extra_indices(message.value("extra", nlohmann::json::object()), output_counts_,
                                                static_cast<int>(ranks_.size()));
  std::vector<nlohmann::json> messages;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    auto m = message;
    m["extra"] = split.per_rank[r];
    messages.push_back(std::move(m));
  }
  const auto replies = ask_all(messages, timeout_s);
  std::vector<nlohmann::json> values;
  std::vector<nlohmann::json> extra;
  double call_s = 0;  // the slowest rank's, as a sample's
  for (const auto& reply : replies) {
    values.push_back(reply.at("values"));
    extra.push_back(reply.at("extra"));
    call_s = std::max(call_s, reply.value("call_s", 0.0));
  }
  return {{"ok", true},
          {"values", ranks::concatenate_values(values)},
          {"extra", ranks::join_extra_values(extra, split.order)},
          {"call_s", call_s}};
}

nlohmann::json rank_group::set_element(const nlohmann::json& message, double timeout_s) {
  const auto name = message.at("buffer").get<std::string>();
  const auto found = input_counts_.find(name);
  AISP_EXPECTS(found != input_counts_.end(), "set_element of an unknown input " + name);
  const auto at = ranks::locate(message.at("index").get<std::size_t>(), found->second);
  AISP_EXPECTS(at.rank < static_cast<int>(ranks_.size()), "set_element index out of range");
  if (declared_.find_buffer(name).same_on_every_rank) {  // every rank's copy, or they would differ
    auto m = message;
    m["index"] = at.index;
    return ask_all(m, timeout_s).front();
  }
  auto m = message;
  m["index"] = at.index;
  auto& rank = *ranks_[static_cast<std::size_t>(at.rank)];
  auto reply = rank.request(m, timeout_s);
  collect_audit_state();
  return reply;
}

nlohmann::json rank_group::request(const nlohmann::json& message, double timeout_s) {
  const auto op = message.value("op", std::string("?"));
  if (op == "init") return init(message, timeout_s);
  if (op == "load") {
    const auto work = protocol::workload_from_json(message.at("workload"));
    output_counts_.clear();
    input_counts_.clear();
    for (const auto& spec : declared_.buffers()) {
      const auto count = static_cast<std::size_t>(std::max<std::int64_t>(1, spec.num_elements(work)));
      (spec.role == buffer_role::output ? output_counts_[spec.name] : input_counts_[spec.name]) = count;
    }
    return ranks::merge_load(ask_all(message, timeout_s));
  }
  if (op == "sample") return ranks::merge_sample(ask_all(message, timeout_s), output_counts_);
  if (op == "truth") return truth(message, timeout_s);
  if (op == "outputs") return outputs(message, timeout_s);
  if (op == "traffic") return ranks::merge_traffic(ask_all(message, timeout_s));
  if (op == "set_element") return set_element(message, timeout_s);
  if (op == "timeline") {  // rank 0's: the trace shows one lane per slot
    auto reply = ranks_.front()->request(message, timeout_s);
    collect_audit_state();
    return reply;
  }
  return ask_all(message, timeout_s).front();  // refill, readdress, the copy probes, exit: the same for every rank
}

void rank_group::shutdown() {
  {  // side by side: each rank's exit tears down its communicator, about a second each
    std::vector<std::jthread> leaving;
    for (auto& rank : ranks_) leaving.emplace_back([&rank] { rank->shutdown(); });
  }
  collect_audit_state();
}

}  // namespace aisp
