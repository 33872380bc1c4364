// Note [allocation counter]: what counts as run()'s allocation, on this machine's allocator.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

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
