// Note [launch]: what every launch rank but 0 does. It checks in with the judge at the
// rendezvous (its launch rank, host, GPU), starts a worker here whenever the judge asks
// (runner/worker_relay.hpp), and when the judge says the run is over writes its own artifacts
// folder: `launch.json` (host, ranks, GPUs, the workers and how each ended) beside the workers'
// logs, which `aisp bench merge` folds in. A judge that goes away ends it with an error.
#pragma once

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
};

// Serves the judge until it says the run is over (returns 0). Throws std::runtime_error with
// one line when the judge cannot be reached or goes away mid-run.
int run_rank_host(const rank_host_config& config);

// The launch manifest's file name in every launch rank's folder.
inline constexpr const char* launch_manifest_name = "launch.json";

}  // namespace aisp
