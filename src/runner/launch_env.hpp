// Note [launch]: where this process stands in a launch by mpirun or srun, read from the
// launcher's environment (no MPI is linked: aisp runs where none is installed), and where the
// judge's rendezvous is. Pure functions of an environment lookup, unit-tested without a launcher.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace aisp {

// A launch rank: 0 is the judge, every other one a rank host (runner/rank_host.hpp).
struct launch_position {
  int rank = 0;
  int size = 1;
  int local_rank = 0;   // among the launch ranks on this host: picks this host's GPU
  std::string source;   // which variables (or "flags") said so, for messages and the manifest
};

// Looks one variable up; nullptr when unset (std::getenv in production).
using env_lookup = std::function<const char*(const char*)>;

// The launcher's position, from (first found) OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK (Open MPI's
// mpirun), SLURM_PROCID/SLURM_STEP_NUM_TASKS or SLURM_NTASKS/SLURM_LOCALID (srun), PMI_RANK/
// PMI_SIZE with MPI_LOCALRANKID (MPICH, Intel MPI), PMIX_RANK (with a size from one of the
// others). nullopt when no launcher's variables are set. Throws std::runtime_error with one line
// when they are malformed or disagree with themselves (a rank outside the size).
[[nodiscard]] std::optional<launch_position> launch_position_from(const env_lookup& env);

// The position from explicit flags (--launch-rank, --launch-size, --local-rank; -1 = not given)
// or else the environment; nullopt (a plain single-process run) when neither says anything or
// the launch has one process.
[[nodiscard]] std::optional<launch_position> resolve_launch_position(int flag_rank, int flag_size, int flag_local_rank,
                                                                     const env_lookup& env);

struct rendezvous_address {
  std::string host;
  int port = 0;
  [[nodiscard]] std::string text() const;
};

// `flag` (HOST:PORT, or [v6]:PORT) when given, else MASTER_ADDR and MASTER_PORT as torchrun reads
// them. Throws one line when neither names a rendezvous, or the port is not 1..65535.
[[nodiscard]] rendezvous_address rendezvous_from(const std::string& flag, const env_lookup& env);

}  // namespace aisp
