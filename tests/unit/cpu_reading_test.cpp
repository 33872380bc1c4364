// Note [bracketed CPU reading]: a single-threaded process reads no other threads' CPU across a
// span that begins right after a cache flush, and a helper's CPU inside the span is all read.
// Note [host idle]: a child process's CPU is read too.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "harness/process_probes.hpp"
#include "harness/timing.hpp"

namespace {

double own_cpu_s() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

void spin_for_own_cpu(double seconds) {
  const double until = own_cpu_s() + seconds;
  volatile std::uint64_t sink = 0;
  while (own_cpu_s() < until) sink = sink + 1;
}

TEST(cpu_reading, a_single_thread_after_a_cache_flush_reads_no_other_threads_cpu) {
  // The host sampler's flush: 64 MiB written before each span. Read with the process clock
  // first, 100 spans summed to 0.75-1.7 ms here (2026-11-28); bracketed, to tens of microseconds.
  std::vector<std::uint64_t> flush((std::size_t{64} << 20) / sizeof(std::uint64_t));
  double others = 0;
  for (std::uint64_t span = 0; span < 100; ++span) {
    for (auto& word : flush) word = span;
    const double before = aisp::other_threads_cpu_s();
    spin_for_own_cpu(50e-6);
    others += aisp::other_threads_cpu_s() - before;
  }
  EXPECT_LT(others, 0.4e-3);
  EXPECT_GT(others, -0.4e-3);
}

TEST(cpu_reading, a_helpers_cpu_inside_the_span_is_read_whole) {
  const double before = aisp::other_threads_cpu_s();
  std::thread helper([] { spin_for_own_cpu(20e-3); });
  helper.join();
  const double others = aisp::other_threads_cpu_s() - before;
  EXPECT_GT(others, 19e-3);
  EXPECT_LT(others, 25e-3);
}

// Note [host idle]: an executable pair's variant computes in a child process, whose CPU the
// process clock does not see. Read live, then again once the child is reaped, it is all there.
TEST(cpu_reading, a_child_process_cpu_is_read_while_it_lives_and_after_it_is_reaped) {
  int spun[2];
  int release[2];
  ASSERT_EQ(pipe(spun), 0);
  ASSERT_EQ(pipe(release), 0);
  const double before = aisp::children_cpu_s();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(release[1]);  // or its own copy would keep the read below from ever seeing the end
    spin_for_own_cpu(20e-3);
    char done = 1;
    if (write(spun[1], &done, 1) != 1) _exit(1);
    if (read(release[0], &done, 1) < 0) _exit(1);  // alive, and idle, until the parent reads
    _exit(0);
  }
  close(release[0]);
  char done = 0;
  const bool spun_whole = read(spun[0], &done, 1) == 1;
  const double while_alive = aisp::children_cpu_s() - before;
  close(release[1]);
  close(spun[0]);
  close(spun[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const double once_reaped = aisp::children_cpu_s() - before;
  ASSERT_TRUE(spun_whole);
  EXPECT_GT(while_alive, 19e-3);
  EXPECT_LT(while_alive, 25e-3);
  EXPECT_GT(once_reaped, 19e-3);
  EXPECT_LT(once_reaped, 25e-3);
}

// Note [waiting visits]: a process's threads' running and waiting times, read from outside it.
// Two threads spinning 20 ms of CPU each on one CPU: 40 ms run, and each waits while the other runs.
TEST(process_tree_schedule, reads_the_time_threads_ran_and_waited_for_a_cpu) {
  int spun[2];
  int release[2];
  ASSERT_EQ(pipe(spun), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(release[1]);
    cpu_set_t one{};
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(1);
    std::thread other([] { spin_for_own_cpu(20e-3); });  // inherits the one-CPU mask
    spin_for_own_cpu(20e-3);
    other.join();
    char done = 1;
    if (write(spun[1], &done, 1) != 1) _exit(1);
    if (read(release[0], &done, 1) < 0) _exit(1);
    _exit(0);
  }
  close(release[0]);
  char done = 0;
  const bool spun_whole = read(spun[0], &done, 1) == 1;
  const auto times = aisp::process_tree_schedule(child);  // the main thread's; the joined one is gone
  close(release[1]);
  close(spun[0]);
  close(spun[1]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(spun_whole);
  EXPECT_GT(times.ran_ns, 19'000'000u);
  EXPECT_GT(times.waited_ns, 2'000'000u);  // the scheduler shares one CPU in slices of a few ms
  EXPECT_EQ(aisp::process_tree_schedule(child).ran_ns, 0u);  // reaped: nothing left to read
}

}  // namespace
