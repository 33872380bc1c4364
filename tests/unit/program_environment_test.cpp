// Note [live program environment]: a child's setenv is read from its memory, where
// /proc/<pid>/environ still shows the environment it started with.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "harness/program_environment.hpp"

namespace {

TEST(live_environment, reads_a_variable_the_child_set_after_it_started) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("AISP_LIVE_ENVIRONMENT_TEST", "set after the start", 1);
    const char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const auto live = aisp::live_environment(child);
  std::ifstream started("/proc/" + std::to_string(child) + "/environ", std::ios::binary);
  const std::string block{std::istreambuf_iterator<char>(started), std::istreambuf_iterator<char>()};
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
  ASSERT_TRUE(live.has_value()) << "the parent may read its child's memory";
  EXPECT_NE(std::find(live->begin(), live->end(), "AISP_LIVE_ENVIRONMENT_TEST=set after the start"), live->end());
  EXPECT_EQ(block.find("AISP_LIVE_ENVIRONMENT_TEST"), std::string::npos) << "/proc/<pid>/environ keeps the starting one";
}

TEST(live_environment, a_process_that_is_gone_reads_as_nothing) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(aisp::live_environment(child).has_value());
}

}  // namespace
