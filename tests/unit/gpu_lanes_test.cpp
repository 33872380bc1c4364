// Note [gpu lanes]: which GPUs --gpus names, and every pair run exactly once across the lanes.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>

#include "aisp/check.hpp"
#include "runner/gpu_lanes.hpp"

namespace {

TEST(gpu_lanes, all_a_count_or_a_list) {
  EXPECT_EQ(aisp::parse_gpu_lanes("all", 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(aisp::parse_gpu_lanes("2", 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(aisp::parse_gpu_lanes("3,1", 4), (std::vector<int>{3, 1}));
}

TEST(gpu_lanes, impossible_lists_are_refused_with_the_reason) {
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("5", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("0", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("1,1", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("0,4", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("two", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("-1", 4)), aisp::contract_error);
  EXPECT_THROW(static_cast<void>(aisp::parse_gpu_lanes("all", 0)), aisp::contract_error);
}

TEST(gpu_lanes, every_item_runs_once_and_each_lane_runs_one_at_a_time) {
  std::mutex lock;
  std::multiset<std::size_t> ran;
  std::set<int> used;
  std::atomic<int> busy[3] = {0, 0, 0};
  std::atomic<bool> overlapped = false;
  aisp::run_on_lanes(40, {0, 1, 2}, [&](std::size_t item, int gpu) {
    if (busy[gpu]++ > 0) overlapped = true;
    {
      const std::lock_guard guard(lock);
      ran.insert(item);
      used.insert(gpu);
    }
    busy[gpu]--;
  });
  EXPECT_EQ(ran.size(), 40u);
  EXPECT_EQ(std::set<std::size_t>(ran.begin(), ran.end()).size(), 40u);
  EXPECT_FALSE(overlapped);
}

TEST(gpu_lanes, a_failure_is_rethrown_after_the_other_lanes_finish) {
  std::atomic<int> ran = 0;
  EXPECT_THROW(aisp::run_on_lanes(10, {0, 1}, [&](std::size_t item, int) {
                 ++ran;
                 if (item == 3) throw std::runtime_error("pair 3 broke");
               }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 4);
}

}  // namespace
