// Note [launch]: `bench run`'s options for a launch by mpirun or srun, and the two roles they
// lead to: launch rank 0 judges (runner/launch_judge.hpp), every other rank serves it as a rank
// host (runner/rank_host.hpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "runner/launch_env.hpp"
#include "runner/launch_judge.hpp"

namespace aisp::cli {

struct launch_options {
  std::string rendezvous;        // HOST:PORT; "" = MASTER_ADDR/MASTER_PORT
  int launch_rank = -1;          // -1: from the launcher's environment
  int launch_size = -1;
  int local_rank = -1;
  double connect_timeout_s = 120;
  bool no_launch = false;        // ignore the launcher's environment: one process, as on one host
};

void add_launch_options(CLI::App& command, launch_options& options);

// Where this process stands: nullopt for an ordinary run of one process.
[[nodiscard]] std::optional<launch_position> launch_position_of(const launch_options& options);

// A launch rank other than 0: judges its share of the pairs with `judge_share` (given its folder),
// then serves the judge until the run is over. `device`: --device.
int serve_as_rank_host(const launch_options& options, const launch_position& position, int device,
                       const std::string& artifacts_dir, std::function<int(const std::string& dir)> judge_share);

// Launch rank 0: listens on the rendezvous and waits for every other launch rank.
[[nodiscard]] std::shared_ptr<launch_judge> open_launch(const launch_options& options, const launch_position& position,
                                                        int device, int gpu_count, const std::string& artifacts_base);

// Writes launch rank 0's launch manifest into its folder (the rank hosts write theirs).
void write_judge_launch_manifest(const std::string& dir, const launch_judge& launch, const nlohmann::json& system, int exit_code);

// The option group's text for --help: what the options do, with an mpirun and an srun example.
inline constexpr const char* launch_help =
    "Several hosts (Note [launch], docs/multi_gpu.md): start one aisp per GPU under mpirun or srun. Each launch rank "
    "judges its share of the single-GPU and host pairs on its own GPU (--device + its local rank); then launch rank 0 "
    "judges the multi-GPU pairs whose world size is the launch size, rank r's workers on launch rank r. Every launch "
    "rank writes <artifacts>/launch-rank-<r>; `aisp bench merge <artifacts>` folds them into the history.\n"
    "  mpirun -np 2 -H a,b aisp bench run --targets ch04 --rendezvous a:29500 --artifacts-dir runs/x\n"
    "  srun -N 2 -n 2 --gpus-per-task 1 aisp bench run --targets ch04 --rendezvous $(scontrol show hostnames | head -1):29500";

}  // namespace aisp::cli
