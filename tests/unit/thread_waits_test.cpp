// Where a stuck worker's threads wait (support/thread_waits.hpp), read from /proc on a child
// that sleeps and on a process that no longer exists.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/thread_waits.hpp"

extern char** environ;

namespace {

TEST(thread_waits, names_a_sleeping_childs_one_thread) {
  pid_t child = 0;
  char sleep_name[] = "sleep";
  char seconds[] = "30";
  char* argv[] = {sleep_name, seconds, nullptr};
  ASSERT_EQ(posix_spawnp(&child, "sleep", nullptr, nullptr, argv, environ), 0);
  std::string waits;
  for (int i = 0; i < 50 && waits.find("running") == std::string::npos && waits.find(" in ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // until it is asleep, not exec'ing
    waits = aisp::thread_waits(child);
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_FALSE(waits.empty()) << "/proc says nothing about a live child";
  EXPECT_EQ(waits.rfind("main thread ", 0), 0u) << waits;
  EXPECT_NE(waits.find("; 1 thread: 1 "), std::string::npos) << waits;
}

TEST(thread_waits, says_nothing_of_a_process_that_is_gone) {
  pid_t child = 0;
  char true_name[] = "true";
  char* argv[] = {true_name, nullptr};
  ASSERT_EQ(posix_spawnp(&child, "true", nullptr, nullptr, argv, environ), 0);
  waitpid(child, nullptr, 0);  // reaped: its /proc entry is gone
  EXPECT_EQ(aisp::thread_waits(child), "");
}

}  // namespace
