// Note [bracketed CPU reading]: a single-threaded process reads no other threads' CPU across a
// span that begins right after a cache flush, and a helper's CPU inside the span is all read.
#include <gtest/gtest.h>

#include <time.h>

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

}  // namespace
