// Note [launch]: launch rank 0's side of a launch by mpirun or srun. The judge listens on the
// rendezvous, waits for every other launch rank (a rank host, runner/rank_host.hpp) to check in,
// and then judges its share of the pairs (runner/launch_share.hpp) while each rank host judges
// its own. Then the multi-rank pairs: one of world size W == launch size puts rank r's workers on
// launch rank r (rank_group asks start_worker for them), once every rank host has finished its
// share, so no GPU is shared. At the end it tells every rank host the run is over.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/launch_env.hpp"
#include "runner/rendezvous.hpp"
#include "runner/worker_process.hpp"

namespace aisp {

// What a launch rank said of itself when it checked in.
struct launch_rank_info {
  int launch_rank = 0;
  int local_rank = 0;
  std::string host;
  int device = 0;     // the GPU its workers use: its --device + its local rank
  int gpu_count = 0;  // GPUs it sees
  long pid = 0;
};

class launch_judge {
 public:
  // Listens on `at` and waits at most `connect_timeout_s` for launch ranks 1..size-1; throws
  // one line naming the ones missing. `artifacts_base`: the run's folder, which every launch
  // rank writes its own `launch-rank-<r>` under.
  launch_judge(const launch_position& self, const rendezvous_address& at, double connect_timeout_s, launch_rank_info own,
               const std::string& artifacts_base);
  ~launch_judge();
  launch_judge(const launch_judge&) = delete;
  launch_judge& operator=(const launch_judge&) = delete;

  [[nodiscard]] int size() const { return static_cast<int>(ranks_.size()); }
  [[nodiscard]] const launch_rank_info& rank(int launch_rank) const { return ranks_.at(static_cast<std::size_t>(launch_rank)); }
  // A worker on launch rank `launch_rank` (> 0), started there by its rank host, which logs it at
  // `log_name` under its own artifacts folder. Throws worker_failure when that rank is gone.
  [[nodiscard]] std::unique_ptr<rank_endpoint> start_worker(int launch_rank, const std::string& log_name);
  // Waits until every rank host has judged its share (at once after the first call); returns the
  // worst exit code of their shares (1 for a rank host that went away meanwhile, named on stderr).
  int await_shares();
  // Tells every rank host the run is over (they write their manifests and exit).
  void finish(int exit_code);
  // Every launch rank: host, local rank, device, GPUs, pid; and the rendezvous.
  [[nodiscard]] nlohmann::json to_json() const;

 private:
  struct control {
    socket_fd connection;
    line_channel channel;
  };
  struct arrived_worker {
    socket_fd connection;
    line_channel channel;
    nlohmann::json hello;
  };
  void await_rank_hosts(double connect_timeout_s);

  launch_position self_;
  rendezvous_address at_;
  double connect_timeout_s_;
  socket_fd listener_;
  std::vector<launch_rank_info> ranks_;
  std::map<int, control> controls_;           // by launch rank
  std::map<int, arrived_worker> early_workers_;  // by token: arrived while another was awaited
  std::mutex starting_;
  int next_token_ = 1;
  std::map<int, int> share_exit_codes_;  // by launch rank, once its share is judged
};

// The folder launch rank `launch_rank` writes into, under the run's folder.
[[nodiscard]] std::string launch_rank_dir(const std::string& artifacts_base, int launch_rank);

}  // namespace aisp
