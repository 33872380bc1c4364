// Note [launch]: a rank host's side of one worker. It connects back to the judge, starts
// `aisp worker` here exactly as the judge would on its own host (the same socket pair, the same
// sandbox, Note [worker sandbox]), and relays the judge's requests and the worker's answers line
// by line. Output files the worker writes here travel back after their answer (its "payload").
// The worker is killed when the judge's end of the connection goes, so none outlives its judge.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/launch_env.hpp"

namespace aisp {

struct relay_job {
  int token = 0;            // the judge's name for this worker, sent back on connecting
  int launch_rank = 0;
  std::string executable;   // the aisp binary
  std::string log_path;     // the worker's stderr, on this host
  std::string scratch_dir;  // where its output files go before they travel
  double connect_timeout_s = 60;
};

// Runs one worker until the judge ends it (or it dies); returns its record for the launch
// manifest: token, log, pid, how it ended.
[[nodiscard]] nlohmann::json relay_worker(const rendezvous_address& judge, const relay_job& job);

}  // namespace aisp
