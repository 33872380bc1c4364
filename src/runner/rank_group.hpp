// Note [ranks]: the workers of one variant slot of a multi-GPU pair, one process per rank, each
// on its own GPU, answering the judge as one worker (worker_link). Every request goes to every
// rank before any answer is awaited (a rank waits for its peers in each collective), and the
// answers fold into one (runner/rank_merge.hpp). The group makes the NCCL communicator's unique
// id and hands it to the ranks at init; a failure of any rank kills them all, since the others
// would wait in a collective forever.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "runner/rank_merge.hpp"
#include "runner/worker_process.hpp"

namespace aisp {

class launch_judge;

class rank_group final : public worker_link {
 public:
  // `log_stem`: each rank logs to `<log_stem>.rank<r>.log`. Rank r runs on GPU first_device + r;
  // in a launch of as many processes as ranks (Note [launch]), rank r > 0 runs on launch rank r's
  // host and GPU instead, started there by its rank host; `log_name` is where it logs there.
  rank_group(const pair& declared, const std::string& executable, const std::string& log_stem, int first_device,
             launch_judge* launch = nullptr, const std::string& log_name = "");
  ~rank_group() override;

  nlohmann::json request(const nlohmann::json& message, double timeout_s) override;
  void shutdown() override;
  [[nodiscard]] pid_t pid() const override;
  [[nodiscard]] const nlohmann::json& sandbox_denials() const override { return denials_; }
  [[nodiscard]] const std::vector<std::string>& audit_tampering() const override { return tampering_; }

 private:
  // Sends each rank its message, then collects every answer; on any failure kills every rank
  // and rethrows the first failure.
  std::vector<nlohmann::json> ask_all(const std::vector<nlohmann::json>& messages, double timeout_s);
  std::vector<nlohmann::json> ask_all(const nlohmann::json& message, double timeout_s);
  nlohmann::json init(const nlohmann::json& message, double timeout_s);
  nlohmann::json outputs(const nlohmann::json& message, double timeout_s);
  nlohmann::json truth(const nlohmann::json& message, double timeout_s);
  nlohmann::json set_element(const nlohmann::json& message, double timeout_s);
  void collect_audit_state();

  const pair& declared_;
  std::vector<int> devices_;  // rank r's GPU
  std::vector<std::unique_ptr<rank_endpoint>> ranks_;
  ranks::output_counts output_counts_;   // of the loaded workload
  std::map<std::string, std::size_t> input_counts_;
  nlohmann::json denials_ = nlohmann::json::array();
  std::vector<std::string> tampering_;
};

// A unique id for a new NCCL communicator, as hex; throws with the reason where NCCL is missing.
[[nodiscard]] std::string new_nccl_unique_id();
// Why this machine cannot run a CUDA pair of world size N from GPU `first_device` on (too few
// GPUs, no NCCL); "" when it can.
[[nodiscard]] std::string multi_gpu_absence(const pair& declared, int first_device, int gpu_count);
// The same for a launch across hosts (Note [launch]): the world size must be the launch size,
// and every launch rank must have its GPU.
[[nodiscard]] std::string launched_absence(const pair& declared, const launch_judge& launch);
// D3: the pair's world size, the GPUs its ranks run on and which can reach which (peer access);
// a host pair's ranks have no GPUs. In a launch: each rank's host and GPU.
[[nodiscard]] nlohmann::json rank_topology(const pair& declared, int first_device, const launch_judge* launch = nullptr);

}  // namespace aisp
