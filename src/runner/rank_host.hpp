// Note [launch]: what every launch rank but 0 does. It checks in with the judge at the
// rendezvous (its launch rank, host, GPU), judges its own share of the pairs into its own folder
// (runner/launch_share.hpp), then starts a worker here whenever the judge asks for one of a
// multi-rank pair (runner/worker_relay.hpp). When the judge says the run is over it writes
// `launch.json` (host, ranks, GPUs, the workers and how each ended) beside its results and the
// workers' logs, which `aisp bench merge` folds in. A judge that goes away ends it with an error.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/launch_env.hpp"

namespace aisp {

struct rank_host_config {
  launch_position position;
  rendezvous_address judge;
  double connect_timeout_s = 120;
  int device = 0;                 // this host's GPU for its workers (--device + local rank)
  int gpu_count = 0;
  std::string artifacts_dir;      // "" = the judge's, under this host's working directory
  std::string executable;         // the aisp binary
  nlohmann::json system;          // this host's hardware, for the manifest
  std::string aisp_version;
  // Judges this launch rank's share of the pairs into the folder it is given; its exit code.
  std::function<int(const std::string& dir)> judge_share;
};

// Serves the judge until it says the run is over; returns its share's exit code. Throws std::runtime_error with
// one line when the judge cannot be reached or goes away mid-run.
int run_rank_host(const rank_host_config& config);

// The launch manifest's file name in every launch rank's folder.
inline constexpr const char* launch_manifest_name = "launch.json";

}  // namespace aisp
