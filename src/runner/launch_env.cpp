#include "runner/launch_env.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace aisp {
namespace {

std::optional<int> integer_of(const env_lookup& env, const char* name) {
  const char* text = env(name);
  if (text == nullptr) return std::nullopt;
  const std::string_view view(text);
  int value = 0;
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size() || view.empty() || value < 0)
    throw std::runtime_error(fmt::format("the launcher's {}='{}' is not a non-negative integer", name, view));
  return value;
}

std::optional<int> first_integer(const env_lookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = integer_of(env, name)) return value;
  }
  return std::nullopt;
}

launch_position checked(launch_position position) {
  if (position.size < 1 || position.rank >= position.size)
    throw std::runtime_error(fmt::format("launch rank {} of a launch of {} ({}): the rank must be below the size",
                                         position.rank, position.size, position.source));
  return position;
}

}  // namespace

std::optional<launch_position> launch_position_from(const env_lookup& env) {
  struct scheme {
    const char* rank;
    std::initializer_list<const char*> sizes;
    std::initializer_list<const char*> local_ranks;
  };
  // Open MPI first: under srun --mpi=pmix an Open MPI process also sees SLURM_*, and they agree.
  const scheme schemes[] = {
      {"OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE"}, {"OMPI_COMM_WORLD_LOCAL_RANK"}},
      // SLURM_STEP_NUM_TASKS is the srun step's size; a batch script's own shell has SLURM_PROCID
      // 0 and the job's SLURM_NTASKS, but no step of several tasks.
      {"SLURM_PROCID", {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, {"SLURM_LOCALID"}},
      {"PMI_RANK", {"PMI_SIZE"}, {"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}},
      {"PMIX_RANK", {"PMIX_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"}, {"PMIX_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}},
  };
  for (const auto& s : schemes) {
    const auto rank = integer_of(env, s.rank);
    if (!rank) continue;
    const auto size = first_integer(env, s.sizes);
    if (!size)
      throw std::runtime_error(fmt::format("{} is set but no launch size is ({}): give --launch-size", s.rank, *s.sizes.begin()));
    launch_position position;
    position.rank = *rank;
    position.size = *size;
    position.local_rank = first_integer(env, s.local_ranks).value_or(0);
    position.source = s.rank;
    return checked(position);
  }
  return std::nullopt;
}

std::optional<launch_position> resolve_launch_position(int flag_rank, int flag_size, int flag_local_rank, const env_lookup& env) {
  std::optional<launch_position> position;
  if (flag_rank >= 0 || flag_size >= 0) {
    if (flag_rank < 0 || flag_size < 0) throw std::runtime_error("--launch-rank and --launch-size go together");
    position = checked({flag_rank, flag_size, 0, "flags"});
  } else {
    position = launch_position_from(env);
  }
  if (position && flag_local_rank >= 0) position->local_rank = flag_local_rank;
  if (position && position->size == 1) return std::nullopt;  // one process: the ordinary run
  return position;
}

std::string rendezvous_address::text() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

rendezvous_address rendezvous_from(const std::string& flag, const env_lookup& env) {
  std::string host;
  std::string port_text;
  std::string said_by;
  if (!flag.empty()) {
    const auto colon = flag.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw std::runtime_error(fmt::format("--rendezvous '{}' is not HOST:PORT", flag));
    host = flag.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    port_text = flag.substr(colon + 1);
    said_by = "--rendezvous";
  } else {
    const char* addr = env("MASTER_ADDR");
    const char* port = env("MASTER_PORT");
    if (addr == nullptr || port == nullptr || *addr == '\0')
      throw std::runtime_error(
          "a launch of several processes needs the judge's rendezvous: give --rendezvous HOST:PORT (launch rank 0's "
          "host) or set MASTER_ADDR and MASTER_PORT");
    host = addr;
    port_text = port;
    said_by = "MASTER_PORT";
  }
  int port = 0;
  const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
    throw std::runtime_error(fmt::format("{}: port '{}' is not 1..65535", said_by, port_text));
  return {host, port};
}

}  // namespace aisp
