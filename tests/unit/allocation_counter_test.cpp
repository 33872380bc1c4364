// Note [allocation counter]: what counts as run()'s allocation, on this machine's allocator.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <time.h>

#include "harness/process_probes.hpp"

namespace {

TEST(allocation_counter, operator_new_counts_outside_the_harnesss_scopes_only) {
  const auto before = aisp::take_process_snapshot().allocations;
  {
    const aisp::uncounted_allocations audit_callback;
    auto kept = std::make_unique<int>(3);
    EXPECT_EQ(*kept, 3);
  }
  // The audit's buffers arrive on a thread of CUPTI's choosing: its scope covers that thread.
  std::thread([] {
    const aisp::uncounted_allocations audit_callback;
    auto kept = std::make_unique<long>(4);
    EXPECT_EQ(*kept, 4);
  }).join();
  const auto after_harness = aisp::take_process_snapshot().allocations;
  EXPECT_LE(after_harness - before, 1u);  // std::thread's own state, at most
  auto runs = std::make_unique<double>(5);
  EXPECT_EQ(*runs, 5);
  EXPECT_GT(aisp::take_process_snapshot().allocations, after_harness);
}

}  // namespace

// Note [other threads' runtime]: the late-write rule reads the other threads' own runtimes.
// A snapshot's own work must not read as run()'s: with many threads (a CUDA and NCCL worker has
// 16) the per-thread /proc reads once allocated a path each (ch04 on 2 x H200, 2026-11-28).
TEST(allocation_counter, two_snapshots_with_nothing_between_differ_by_nothing) {
  std::mutex gate;
  std::unique_lock hold(gate);
  std::vector<std::thread> idle;
  for (int i = 0; i < 16; ++i) idle.emplace_back([&gate] { const std::lock_guard wait(gate); });
  const auto before = aisp::take_process_snapshot();
  const auto after = aisp::take_process_snapshot();
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_EQ(after.c_allocations, before.c_allocations);
  EXPECT_EQ(after.children, 0U);
  hold.unlock();
  for (auto& t : idle) t.join();
}

TEST(other_thread_runtimes, a_survivor_counts_its_growth_a_newcomer_all_and_an_exit_falls_back_to_the_process_clock) {
  const aisp::thread_runtimes first{{10, 1'000}, {11, 5'000}};
  EXPECT_DOUBLE_EQ(aisp::cpu_between(first, {{10, 1'000}, {11, 5'000}}, 30e-6), 0.0);  // process-clock drift ignored
  EXPECT_DOUBLE_EQ(aisp::cpu_between(first, {{10, 41'000}, {11, 5'000}}, 0.0), 40e-6);
  EXPECT_DOUBLE_EQ(aisp::cpu_between(first, {{10, 1'000}, {11, 5'000}, {12, 7'000}}, 0.0), 7e-6);
  EXPECT_DOUBLE_EQ(aisp::cpu_between(first, {{10, 1'000}}, 25e-6), 25e-6);
  EXPECT_DOUBLE_EQ(aisp::cpu_between({}, {}, 25e-6), 0.0);  // one thread: nothing to read
}

// A thread started and joined inside a timed span is in neither reading of the live threads:
// the process clock's excess over them counts, past its reading noise.
TEST(other_thread_runtimes, a_thread_that_came_and_went_in_the_span_counts_through_the_process_clock) {
  EXPECT_DOUBLE_EQ(aisp::span_cpu_of_other_threads({}, {}, 3e-6, 5e-6), 0.0);  // reading noise
  EXPECT_NEAR(aisp::span_cpu_of_other_threads({}, {}, 505e-6, 5e-6), 500e-6, 1e-12);
  const aisp::thread_runtimes first{{10, 1'000}};
  EXPECT_NEAR(aisp::span_cpu_of_other_threads(first, {{10, 101'000}}, 102e-6, 5e-6), 100e-6, 1e-12);
  EXPECT_NEAR(aisp::span_cpu_of_other_threads(first, {{10, 101'000}}, 400e-6, 5e-6), 395e-6, 1e-12);
  // And for real: a thread that spins for 3 ms of its own CPU and is joined between the readings.
  const auto others = [](const aisp::cpu_reading& r) { return r.process_cpu_s - r.thread_cpu_s; };
  const auto runtimes_before = aisp::other_thread_runtimes();
  const auto cpu_before = aisp::take_cpu_reading();
  std::thread([] {
    for (timespec used{}; used.tv_sec == 0 && used.tv_nsec < 3'000'000;) clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  }).join();
  const auto cpu_after = aisp::take_cpu_reading();
  EXPECT_GT(aisp::span_cpu_of_other_threads(runtimes_before, aisp::other_thread_runtimes(), others(cpu_after) - others(cpu_before), 5e-6),
            2e-3);
}

// Note [declared threads]: the threads that worked between two readings, a newcomer by all of its runtime.
TEST(other_thread_runtimes, count_the_threads_that_worked_between_two_readings) {
  const aisp::thread_runtimes first{{10, 1'000}, {11, 5'000}};
  EXPECT_EQ(aisp::threads_busy_between(first, {{10, 3'000}, {11, 5'000}}, 10e-6), 0);  // a wake-up's 2 us
  EXPECT_EQ(aisp::threads_busy_between(first, {{10, 501'000}, {11, 5'000}, {12, 40'000}}, 10e-6), 2);
  EXPECT_EQ(aisp::threads_busy_between({}, {}, 10e-6), 0);
}

// Note [starved helpers]: a spinning helper is runnable; one blocked on a condition is not.
TEST(another_thread_runnable, sees_a_spinning_helper_and_not_a_blocked_one) {
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable wake;
  bool woken = false;
  std::thread blocked([&] {
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return woken; });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // it reaches its wait
  EXPECT_FALSE(aisp::another_thread_runnable());
  std::thread spinning([&stop] {
    while (!stop.load()) {
    }
  });
  EXPECT_TRUE(aisp::another_thread_runnable());
  stop = true;
  spinning.join();
  {
    const std::lock_guard lock(mutex);
    woken = true;
  }
  wake.notify_one();
  blocked.join();
}

TEST(other_thread_runtimes, see_a_busy_helper_thread_and_not_the_calling_one) {
  std::atomic<bool> stop{false};
  std::thread helper([&stop] {
    while (!stop.load()) {
    }
  });
  const auto first = aisp::other_thread_runtimes();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
  }
  const auto second = aisp::other_thread_runtimes();
  stop = true;
  helper.join();
  ASSERT_GE(first.size(), 1u);  // the helper (and any runtime thread), never the caller
  EXPECT_GT(aisp::cpu_between(first, second, 0.0), 1e-3);
}
