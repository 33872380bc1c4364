// Note [launch]: where a process stands in an mpirun or srun launch, and where the judge's
// rendezvous is, read from a launcher's environment (written out here as each launcher sets it).
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "runner/launch_env.hpp"

namespace {

using aisp::launch_position_from;
using aisp::rendezvous_from;
using aisp::resolve_launch_position;

aisp::env_lookup env_of(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

TEST(launch_env, open_mpi_gives_rank_size_and_local_rank) {
  const auto position = launch_position_from(
      env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->rank, 3);
  EXPECT_EQ(position->size, 4);
  EXPECT_EQ(position->local_rank, 1);
  EXPECT_EQ(position->source, "OMPI_COMM_WORLD_RANK");
}

TEST(launch_env, srun_uses_the_step_size_before_the_job_size) {
  const auto position = launch_position_from(env_of(
      {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"SLURM_LOCALID", "0"}}));
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->rank, 1);
  EXPECT_EQ(position->size, 2);
  EXPECT_EQ(position->local_rank, 0);
}

TEST(launch_env, mpich_pmi_and_pmix_are_read_too) {
  const auto pmi = launch_position_from(env_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "2"}}));
  ASSERT_TRUE(pmi.has_value());
  EXPECT_EQ(pmi->rank, 2);
  EXPECT_EQ(pmi->size, 3);
  EXPECT_EQ(pmi->local_rank, 2);
  const auto pmix = launch_position_from(env_of({{"PMIX_RANK", "1"}, {"PMIX_SIZE", "2"}}));
  ASSERT_TRUE(pmix.has_value());
  EXPECT_EQ(pmix->rank, 1);
  EXPECT_EQ(pmix->size, 2);
  EXPECT_EQ(pmix->local_rank, 0);  // no local rank given: the first GPU
}

TEST(launch_env, no_launcher_means_no_launch) {
  EXPECT_FALSE(launch_position_from(env_of({{"HOME", "/root"}})).has_value());
  EXPECT_FALSE(resolve_launch_position(-1, -1, -1, env_of({})).has_value());
}

TEST(launch_env, a_launch_of_one_process_is_the_ordinary_run) {
  EXPECT_FALSE(resolve_launch_position(-1, -1, -1, env_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}))
                   .has_value());
}

TEST(launch_env, malformed_or_inconsistent_variables_are_refused) {
  EXPECT_THROW(static_cast<void>(launch_position_from(env_of({{"OMPI_COMM_WORLD_RANK", "two"}, {"OMPI_COMM_WORLD_SIZE", "4"}}))),
               std::runtime_error);
  EXPECT_THROW(static_cast<void>(launch_position_from(env_of({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}))),
               std::runtime_error);
  EXPECT_THROW(static_cast<void>(launch_position_from(env_of({{"PMI_RANK", "0"}}))), std::runtime_error);
  EXPECT_THROW(static_cast<void>(launch_position_from(env_of({{"SLURM_PROCID", "-1"}, {"SLURM_NTASKS", "2"}}))), std::runtime_error);
}

TEST(launch_env, flags_win_over_the_environment) {
  const auto env = env_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}});
  const auto position = resolve_launch_position(1, 2, 1, env);
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(position->rank, 1);
  EXPECT_EQ(position->size, 2);
  EXPECT_EQ(position->local_rank, 1);
  EXPECT_EQ(position->source, "flags");
  EXPECT_EQ(resolve_launch_position(-1, -1, 3, env)->local_rank, 3);  // --local-rank alone overrides the launcher's
  EXPECT_THROW(static_cast<void>(resolve_launch_position(1, -1, -1, env)), std::runtime_error);
  EXPECT_THROW(static_cast<void>(resolve_launch_position(2, 2, -1, env)), std::runtime_error);
}

TEST(launch_env, the_rendezvous_comes_from_the_flag_or_master_addr_and_port) {
  const auto from_flag = rendezvous_from("node7:29500", env_of({{"MASTER_ADDR", "other"}, {"MASTER_PORT", "1"}}));
  EXPECT_EQ(from_flag.host, "node7");
  EXPECT_EQ(from_flag.port, 29500);
  const auto v6 = rendezvous_from("[::1]:6000", env_of({}));
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.text(), "[::1]:6000");
  const auto from_env = rendezvous_from("", env_of({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29400"}}));
  EXPECT_EQ(from_env.text(), "10.0.0.1:29400");
}

TEST(launch_env, a_missing_or_bad_rendezvous_is_one_clear_line) {
  try {
    static_cast<void>(rendezvous_from("", env_of({})));
    FAIL() << "no rendezvous was accepted";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--rendezvous HOST:PORT"), std::string::npos) << message;
    EXPECT_NE(message.find("MASTER_ADDR"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_THROW(static_cast<void>(rendezvous_from("node7", env_of({}))), std::runtime_error);
  EXPECT_THROW(static_cast<void>(rendezvous_from("node7:0", env_of({}))), std::runtime_error);
  EXPECT_THROW(static_cast<void>(rendezvous_from("node7:70000", env_of({}))), std::runtime_error);
  EXPECT_THROW(static_cast<void>(rendezvous_from("", env_of({{"MASTER_ADDR", "a"}, {"MASTER_PORT", "x"}}))), std::runtime_error);
}

}  // namespace
