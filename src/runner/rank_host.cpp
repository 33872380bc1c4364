#include "runner/rank_host.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runner/launch_judge.hpp"
#include "runner/rendezvous.hpp"
#include "runner/worker_relay.hpp"
#include "support/utc_time.hpp"

namespace aisp {
namespace {

using nlohmann::json;

void write_manifest(const std::string& dir, const json& manifest) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir + "/" + launch_manifest_name);
  out << manifest.dump(2) << "\n";
}

// The share's exit code; a share that throws is reported and counts as a failure, and the rank
// host still serves the multi-rank pairs.
int judge_share_safely(const rank_host_config& config, const std::string& dir) {
  if (!config.judge_share) return 0;
  try {
    return config.judge_share(dir);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aisp: error: launch rank %d's share of the pairs: %s\n", config.position.rank, error.what());
    return 1;
  }
}

}  // namespace

int run_rank_host(const rank_host_config& config) {
  const auto& position = config.position;
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // as rank_group sets it for the judge's own workers
  std::string why;
  socket_fd connection = connect_until(config.judge, deadline_in(config.connect_timeout_s), why);
  if (!connection.valid())
    throw std::runtime_error(fmt::format("launch rank {} could not reach the judge (launch rank 0) at {} within {:g} s: {}",
                                         position.rank, config.judge.text(), config.connect_timeout_s, why));
  line_channel control(connection.get(), connection.get());
  const std::string host = this_host_name();
  json manifest = {{"launch", {{"launch_rank", position.rank}, {"launch_size", position.size}, {"local_rank", position.local_rank},
                               {"source", position.source}, {"rendezvous", config.judge.text()}}},
                   {"host", host}, {"pid", static_cast<long>(getpid())}, {"device_index", config.device},
                   {"gpu_count", config.gpu_count}, {"device", config.system}, {"aisp_version", config.aisp_version},
                   {"started_at", utc_now()}};
  control.write_all(json{{"hello", "rank_host"}, {"launch_rank", position.rank}, {"launch_size", position.size},
                         {"local_rank", position.local_rank}, {"host", host}, {"device", config.device},
                         {"gpu_count", config.gpu_count}, {"pid", static_cast<long>(getpid())}}
                        .dump() +
                    "\n");
  std::string dir;
  std::mutex records_lock;
  json workers = json::array();
  std::vector<std::jthread> relays;
  int judge_exit = -1;
  int share_exit = 0;
  const auto far = deadline_in(1e8);  // a suite may run for hours; the judge's end is what ends this
  while (true) {
    std::string line;
    if (control.read_line(line, far) != line_channel::outcome::line) {
      if (!dir.empty()) {
        manifest["state"] = "the judge went away";
        manifest["finished_at"] = utc_now();
        relays.clear();  // their connections end with the judge: each worker is killed
        manifest["workers"] = workers;
        write_manifest(dir, manifest);
      }
      throw std::runtime_error(fmt::format("launch rank {}: the judge (launch rank 0 at {}) went away{}", position.rank,
                                           config.judge.text(), dir.empty() ? " before the run began" : " mid-run"));
    }
    const auto message = json::parse(line, nullptr, false);
    const std::string op = message.is_object() ? message.value("op", "") : "";
    if (op == "welcome") {
      const std::string base = config.artifacts_dir.empty() ? message.value("artifacts_base", "artifacts/launch") : config.artifacts_dir;
      dir = std::filesystem::absolute(launch_rank_dir(base, position.rank)).string();
      manifest["artifacts_dir"] = dir;
      manifest["state"] = "running";
      write_manifest(dir, manifest);  // a host that dies mid-run still says what it was
      share_exit = judge_share_safely(config, dir);
      manifest["share_exit_code"] = share_exit;
      control.write_all(json{{"op", "share_done"}, {"exit_code", share_exit}}.dump() + "\n");
    } else if (op == "spawn") {
      relay_job job;
      job.token = message.value("token", 0);
      job.launch_rank = position.rank;
      job.executable = config.executable;
      job.log_path = dir + "/workers/" + message.value("log", fmt::format("worker{}.log", job.token));
      job.scratch_dir = dir + "/scratch";
      job.connect_timeout_s = config.connect_timeout_s;
      relays.emplace_back([&, job] {
        auto record = relay_worker(config.judge, job);
        const std::lock_guard lock(records_lock);
        workers.push_back(std::move(record));
      });
    } else if (op == "done") {
      judge_exit = message.value("exit_code", -1);
      break;
    }
  }
  relays.clear();  // the judge shut every worker down before it said done
  std::filesystem::remove_all(dir + "/scratch");
  manifest["state"] = "done";
  manifest["judge_exit_code"] = judge_exit;
  manifest["finished_at"] = utc_now();
  manifest["workers"] = workers;
  write_manifest(dir, manifest);
  return share_exit;
}

}  // namespace aisp
