// labs/decode's KV page pool (labs/decode/kv_pages.hpp) and the scheduler that serves a trace
// from it: slabs against pages on demand, preemption, and a simulated cache read through the
// block table as the GPU kernels read it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "../../labs/decode/kv_pages.hpp"
#include "../../labs/decode/serving_scheduler.hpp"
#include "../../labs/decode/serving_workload.hpp"

namespace {

using aisp::decode::kv_allocation;
using aisp::decode::kv_page_pool;
using aisp::decode::request_shape;
using aisp::decode::serving_launch;
using aisp::decode::serving_scheduler;

TEST(kv_page_pool, a_slab_is_the_slots_own_run_of_pages_reserved_whole) {
  kv_page_pool pool(12, 4, 3, 10, kv_allocation::slabs);  // 3 pages a slot
  ASSERT_TRUE(pool.hold(1, 2));
  EXPECT_EQ(std::vector<int>(pool.table().begin() + 3, pool.table().begin() + 6), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(pool.reserved_tokens(), 12);
  EXPECT_EQ(pool.used_tokens(), 2);
  EXPECT_FALSE(pool.can_hold(1, 13)) << "longer than the longest sequence";
  pool.release(1);
  EXPECT_EQ(pool.reserved_tokens(), 0);
  EXPECT_EQ(kv_page_pool::slabs_that_fit(12, 4, 10), 4);
}

TEST(kv_page_pool, pages_on_demand_grow_with_the_sequence_and_come_back_on_release) {
  kv_page_pool pool(3, 4, 2, 12, kv_allocation::pages_on_demand);
  ASSERT_TRUE(pool.hold(0, 5));  // two pages
  EXPECT_EQ(pool.reserved_tokens(), 8);
  ASSERT_TRUE(pool.hold(1, 4));  // the third
  EXPECT_FALSE(pool.hold(0, 9)) << "no page left";
  EXPECT_EQ(pool.reserved_tokens(), 12) << "a refused hold changes nothing";
  EXPECT_EQ(pool.used_tokens(), 9);
  pool.release(1);
  ASSERT_TRUE(pool.hold(0, 9));
  const std::set<int> pages(pool.table().begin(), pool.table().begin() + 3);
  EXPECT_EQ(pages, (std::set<int>{0, 1, 2}));
}

// Live sequences of 1, 64, 65 and 700 positions, a longest of 2048, pages of 64: slabs reserve
// the longest for each, pages at most one page beyond what each holds.
TEST(kv_page_pool, pages_waste_at_most_a_page_a_sequence_where_slabs_reserve_the_longest) {
  const std::vector<int> lengths{1, 64, 65, 700};
  kv_page_pool slabs(4 * 32, 64, 4, 2048, kv_allocation::slabs);
  kv_page_pool pages(4 * 32, 64, 4, 2048, kv_allocation::pages_on_demand);
  for (int s = 0; s < 4; ++s) {
    ASSERT_TRUE(slabs.hold(s, lengths[static_cast<std::size_t>(s)]));
    ASSERT_TRUE(pages.hold(s, lengths[static_cast<std::size_t>(s)]));
  }
  EXPECT_EQ(slabs.used_tokens(), 1 + 64 + 65 + 700);
  EXPECT_EQ(pages.used_tokens(), 1 + 64 + 65 + 700);
  EXPECT_EQ(slabs.reserved_tokens(), 4 * 2048);
  EXPECT_EQ(pages.reserved_tokens(), 64 + 64 + 128 + 704);
  EXPECT_FALSE(pages.hold(0, 4096)) << "longer than the longest sequence";
  EXPECT_FALSE(slabs.hold(0, 4096));
}

TEST(kv_page_pool, refuses_an_empty_pool_and_more_slabs_than_fit) {
  EXPECT_THROW(kv_page_pool(0, 4, 1, 4, kv_allocation::pages_on_demand), std::invalid_argument);
  EXPECT_THROW(kv_page_pool(5, 4, 2, 12, kv_allocation::slabs), std::invalid_argument);
}

std::vector<request_shape> busy_trace() {
  std::vector<request_shape> trace;
  for (int i = 0; i < 24; ++i) trace.push_back({0.002 * i, 3 + (i * 7) % 12, 4 + (i * 5) % 29});
  return trace;
}

// Serves the trace while a simulated cache, addressed through the block table as the kernels
// address it, checks that every row sees exactly its own sequence's positions 0..position.
struct served {
  int most_running = 0;
  int launches = 0;
  bool cache_right = true;
  double mean_running = 0;     // sequences the cache holds, a launch's mean
  double mean_unused = 0;      // positions reserved without a token, a launch's mean
  double planned_end_s = 0;    // when the last token is done, a launch costing 1 ms a 16 rows
};

served serve_through_the_table(serving_scheduler& s) {
  served result;
  std::map<std::pair<int, int>, std::pair<int, int>> cache;  // (page, offset) -> (request, position)
  aisp::decode::run_to_end(s, [&](const serving_launch& launch) {
    const auto& pool = *s.pool();
    const auto where = [&](int slot, int position) {
      const int page = pool.table()[static_cast<std::size_t>(slot * pool.pages_per_slot() + position / pool.page_tokens())];
      return std::make_pair(page, position % pool.page_tokens());
    };
    for (int i = 0; i < launch.rows(); ++i) {
      const int request = launch.row_request[static_cast<std::size_t>(i)];
      const int slot = launch.row_slot[static_cast<std::size_t>(i)];
      const int position = launch.row_position[static_cast<std::size_t>(i)];
      if (where(slot, position).first < 0) result.cache_right = false;
      cache[where(slot, position)] = {request, position};
      for (int p = 0; p <= position; ++p) {
        const auto found = cache.find(where(slot, p));
        if (found == cache.end() || found->second != std::make_pair(request, p)) result.cache_right = false;
      }
    }
    result.most_running = std::max(result.most_running, s.running());
    result.mean_running += s.running();
    result.mean_unused += static_cast<double>(pool.reserved_tokens() - pool.used_tokens());
    ++result.launches;
    return 0.001 * ((launch.rows() + 15) / 16);
  });
  result.mean_running /= result.launches;
  result.mean_unused /= result.launches;
  for (int r = 0; r < s.requests(); ++r) result.planned_end_s = std::max(result.planned_end_s, s.token_times(r).back());
  return result;
}

void expect_every_token_in_order(const serving_scheduler& s, const std::vector<request_shape>& trace) {
  for (int r = 0; r < s.requests(); ++r) {
    const auto& times = s.token_times(r);
    ASSERT_EQ(static_cast<int>(times.size()), trace[static_cast<std::size_t>(r)].output_tokens) << "request " << r;
    for (std::size_t i = 1; i < times.size(); ++i) EXPECT_GT(times[i], times[i - 1]);
  }
}

TEST(paged_serving, pages_on_demand_run_more_sequences_than_slabs_of_the_same_pool) {
  const auto trace = busy_trace();
  constexpr int page = 4, pages = 40, longest = 48;
  serving_scheduler slabs(trace, kv_page_pool(pages, page, kv_page_pool::slabs_that_fit(pages, page, longest), longest, kv_allocation::slabs));
  serving_scheduler paged(trace, kv_page_pool(pages, page, 12, longest, kv_allocation::pages_on_demand));
  const auto with_slabs = serve_through_the_table(slabs);
  const auto with_pages = serve_through_the_table(paged);
  EXPECT_TRUE(with_slabs.cache_right);
  EXPECT_TRUE(with_pages.cache_right);
  EXPECT_EQ(with_slabs.most_running, 3);
  EXPECT_GT(with_pages.most_running, with_slabs.most_running);
  EXPECT_LT(with_pages.launches, with_slabs.launches);
  expect_every_token_in_order(slabs, trace);
  expect_every_token_in_order(paged, trace);
}

TEST(paged_serving, a_full_pool_preempts_the_latest_sequence_which_recomputes_its_prefix) {
  const auto trace = busy_trace();
  serving_scheduler s(trace, kv_page_pool(14, 4, 8, 48, kv_allocation::pages_on_demand));
  const auto result = serve_through_the_table(s);
  EXPECT_GT(s.preemptions(), 0) << "14 pages for 8 slots must run out";
  EXPECT_TRUE(result.cache_right) << "a recomputed prefix must be back in the cache before it is read";
  expect_every_token_in_order(s, trace);
  const int preempted = s.preemptions();
  static_cast<void>(serve_through_the_table(s));
  EXPECT_EQ(s.preemptions(), preempted) << "a reset replays the same schedule";
}

TEST(paged_serving, refuses_a_request_longer_than_the_pools_longest_sequence) {
  EXPECT_THROW(serving_scheduler({{0.0, 30, 30}}, kv_page_pool(20, 4, 2, 48, kv_allocation::pages_on_demand)), std::invalid_argument);
  EXPECT_THROW(serving_scheduler({{0.0, 3, 3}}, kv_page_pool(2, 4, 2, 48, kv_allocation::pages_on_demand)), std::invalid_argument);
}

// labs/decode:paged_kv_cache's sizes (paged_kv_cache.cu), through the functions the pair uses:
// the validation sizes must preempt (so the GPU verifies a recomputed prefix), and at the
// benchmark size pages on demand must hold more sequences with less memory unused.
aisp::workload paged_pair_size(std::int64_t model, std::int64_t requests, std::int64_t rate, std::int64_t prompt_max, std::int64_t output_max,
                               std::int64_t slots, std::int64_t kv_pages, std::int64_t page) {
  return {aisp::workload_kind::validation,
          {{"model", model}, {"requests", requests}, {"rate", rate}, {"prompt_max", prompt_max}, {"output_max", output_max},
           {"slots", slots}, {"step_us", 50}, {"kv_pages", kv_pages}, {"page", page}}};
}

TEST(paged_serving, the_paged_pairs_validation_sizes_preempt_and_its_benchmark_size_fits_more) {
  for (const auto& w : {paged_pair_size(0, 7, 50000, 6, 12, 4, 8, 4), paged_pair_size(1, 5, 50000, 9, 33, 3, 16, 4),
                        paged_pair_size(1, 6, 50000, 7, 21, 4, 12, 4)}) {
    serving_scheduler paged(aisp::decode::shapes_of(w), aisp::decode::pool_of(w, kv_allocation::pages_on_demand));
    EXPECT_TRUE(serve_through_the_table(paged).cache_right) << w.describe();
    EXPECT_GT(paged.preemptions(), 0) << w.describe();
  }
  const auto bench = paged_pair_size(2, 48, 400, 32, 128, 12, 64, 16);
  const auto slab_pool = aisp::decode::pool_of(bench, kv_allocation::slabs);
  EXPECT_EQ(slab_pool.slots(), 6);
  serving_scheduler slabs(aisp::decode::shapes_of(bench), slab_pool);
  serving_scheduler paged(aisp::decode::shapes_of(bench), aisp::decode::pool_of(bench, kv_allocation::pages_on_demand));
  const auto with_slabs = serve_through_the_table(slabs);
  const auto with_pages = serve_through_the_table(paged);
  const double pool_tokens = 64.0 * 16.0;
  // What README's paged_kv_cache section quotes from this model.
  RecordProperty("slab_sequences_mean", std::to_string(with_slabs.mean_running));
  RecordProperty("paged_sequences_mean", std::to_string(with_pages.mean_running));
  RecordProperty("slab_unused_share", std::to_string(with_slabs.mean_unused / pool_tokens));
  RecordProperty("paged_unused_share", std::to_string(with_pages.mean_unused / pool_tokens));
  RecordProperty("planned_speedup", std::to_string(with_slabs.planned_end_s / with_pages.planned_end_s));
  EXPECT_GT(with_pages.most_running, with_slabs.most_running);
  EXPECT_GT(with_pages.mean_running, 1.5 * with_slabs.mean_running);
  EXPECT_GT(with_slabs.mean_unused / pool_tokens, 0.4) << "a slab mostly waits for tokens that never come";
  EXPECT_LT(with_pages.mean_unused / pool_tokens, 0.1) << "a page is at most one page short of full";
  EXPECT_EQ(paged.preemptions(), 0) << "the benchmark size runs without preemption (a preempted request's TPOT could fail W12)";
  EXPECT_GT(with_slabs.planned_end_s / with_pages.planned_end_s, 1.3);
  EXPECT_THROW(static_cast<void>(aisp::decode::pool_of(paged_pair_size(0, 1, 1, 4, 5, 2, 4, 2), kv_allocation::slabs)), std::invalid_argument);
}

}  // namespace
