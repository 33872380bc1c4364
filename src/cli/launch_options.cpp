#include "cli/launch_options.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/number_checks.hpp"
#include "hw/system_info.hpp"
#include "runner/rank_host.hpp"
#include "runner/rendezvous.hpp"
#include "runner/worker_process.hpp"

namespace aisp::cli {

void add_launch_options(CLI::App& command, launch_options& options) {
  const std::string group = "Launch across hosts (mpirun, srun)";
  command.add_option("--rendezvous", options.rendezvous,
                     "HOST:PORT where launch rank 0 (the judge) listens and the other launch ranks connect (default: "
                     "MASTER_ADDR:MASTER_PORT). Only read when the launcher started several processes")
      ->group(group);
  command.add_option("--launch-rank", options.launch_rank,
                     "this process's launch rank, instead of the launcher's environment (OMPI_COMM_WORLD_RANK, "
                     "SLURM_PROCID, PMI_RANK, PMIX_RANK)")
      ->check(cli::non_negative_number)
      ->group(group);
  command.add_option("--launch-size", options.launch_size, "the number of launched processes, with --launch-rank")
      ->check(cli::positive_number)
      ->group(group);
  command.add_option("--local-rank", options.local_rank,
                     "this process's rank among those on its host (default: OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, "
                     "MPI_LOCALRANKID, else 0); its workers use GPU --device + local rank")
      ->check(cli::non_negative_number)
      ->group(group);
  command.add_option("--rendezvous-timeout", options.connect_timeout_s,
                     "seconds launch rank 0 waits for the others to check in, and they for it (default 120)")
      ->check(cli::positive_number)
      ->group(group);
  command.add_flag("--no-launch", options.no_launch,
                   "ignore the launcher's environment: run as one process on this host (e.g. inside an sbatch script)")
      ->group(group);
}

std::optional<launch_position> launch_position_of(const launch_options& options) {
  if (options.no_launch) return std::nullopt;
  return resolve_launch_position(options.launch_rank, options.launch_size, options.local_rank,
                                 [](const char* name) -> const char* { return std::getenv(name); });
}

namespace {

rendezvous_address rendezvous_of(const launch_options& options) {
  return rendezvous_from(options.rendezvous, [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace

int serve_as_rank_host(const launch_options& options, const launch_position& position, int device,
                       const std::string& artifacts_dir, std::function<int(const std::string& dir)> judge_share) {
  rank_host_config config;
  config.position = position;
  config.judge = rendezvous_of(options);
  config.connect_timeout_s = options.connect_timeout_s;
  config.device = device + position.local_rank;
  const auto system = probe_system();
  config.gpu_count = static_cast<int>(system.gpus.size());
  config.system = to_json(system);
  config.artifacts_dir = artifacts_dir;
  config.executable = current_executable();
  config.aisp_version = aisp_version();
  config.judge_share = std::move(judge_share);
  return run_rank_host(config);
}

std::shared_ptr<launch_judge> open_launch(const launch_options& options, const launch_position& position, int device,
                                          int gpu_count, const std::string& artifacts_base) {
  launch_rank_info own;
  own.local_rank = position.local_rank;
  own.host = this_host_name();
  own.device = device;
  own.gpu_count = gpu_count;
  own.pid = static_cast<long>(getpid());
  return std::make_shared<launch_judge>(position, rendezvous_of(options), options.connect_timeout_s, own, artifacts_base);
}

void write_judge_launch_manifest(const std::string& dir, const launch_judge& launch, const nlohmann::json& system, int exit_code) {
  const auto& own = launch.rank(0);
  auto about = launch.to_json();
  about["launch_rank"] = 0;
  about["local_rank"] = own.local_rank;
  const nlohmann::json manifest = {{"launch", about}, {"host", own.host}, {"pid", own.pid},
                                   {"device_index", own.device}, {"gpu_count", own.gpu_count}, {"device", system},
                                   {"aisp_version", aisp_version()}, {"artifacts_dir", dir}, {"state", "done"},
                                   {"exit_code", exit_code}, {"results", "results.json"}};
  std::ofstream out(dir + "/" + launch_manifest_name);
  out << manifest.dump(2) << "\n";
}

}  // namespace aisp::cli
