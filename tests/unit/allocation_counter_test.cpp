// Note [allocation counter]: what counts as run()'s allocation, on this machine's allocator.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

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
