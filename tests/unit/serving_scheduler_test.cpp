// labs/decode's serving schedulers (labs/decode/serving_scheduler.hpp) on a fake clock: what each
// launch runs, when slots free, and that both policies give every request all its tokens.
#include <gtest/gtest.h>

#include <vector>

#include "../../labs/decode/serving_scheduler.hpp"

namespace {

using aisp::decode::batching;
using aisp::decode::request_shape;
using aisp::decode::serving_scheduler;

// Runs the scheduler to the end, each launch taking `step_s`; returns the launches' row counts.
std::vector<int> drive(serving_scheduler& s, double step_s) {
  std::vector<int> rows;
  double now = 0;
  while (!s.done()) {
    const auto* launch = s.next(now);
    if (launch == nullptr) {
      now = s.next_arrival_s();
      continue;
    }
    rows.push_back(launch->rows());
    now += step_s;
    s.completed(*launch, now);
  }
  return rows;
}

const std::vector<request_shape> two_short_one_long{{0.0, 3, 4}, {0.0, 2, 1}, {0.5, 2, 2}};

TEST(serving_scheduler, continuous_batching_fills_a_freed_slot_at_the_next_step) {
  serving_scheduler s(two_short_one_long, 2, batching::continuous);
  const auto* first = s.next(0.0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->rows(), 5) << "both prompts in one prefill";
  EXPECT_EQ(first->picks(), 2);
  EXPECT_EQ(first->pick_index, (std::vector<int>{0, 0}));
  s.completed(*first, 0.1);  // request 1 (one output token) is done: its slot frees
  const auto* second = s.next(0.6);  // request 2 has arrived: admitted and prefilled, the decode waits
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->row_request, (std::vector<int>{2, 2}));
  EXPECT_EQ(second->row_slot[0], 1) << "the slot request 1 left";
  s.completed(*second, 0.7);
  const auto* third = s.next(0.7);
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->row_request, (std::vector<int>{0, 2}));
  EXPECT_EQ(third->row_position, (std::vector<int>{3, 2})) << "each feeds its last token at prompt + produced - 1";
  EXPECT_EQ(third->pick_index, (std::vector<int>{1, 1}));
}

TEST(serving_scheduler, static_batching_holds_new_requests_until_the_whole_batch_is_done) {
  serving_scheduler s(two_short_one_long, 2, batching::static_batches);
  const auto* first = s.next(0.0);
  ASSERT_NE(first, nullptr);
  s.completed(*first, 0.1);
  for (int i = 0; i < 3; ++i) {  // request 0's three more tokens
    const auto* step = s.next(0.6 + 0.1 * i);
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->row_request, (std::vector<int>{0})) << "request 2 waits although a slot is idle";
    s.completed(*step, 0.7 + 0.1 * i);
  }
  const auto* next_batch = s.next(1.0);
  ASSERT_NE(next_batch, nullptr);
  EXPECT_EQ(next_batch->row_request, (std::vector<int>{2, 2}));
}

TEST(serving_scheduler, both_policies_give_every_request_all_its_tokens_in_time_order) {
  std::vector<request_shape> trace;
  for (int i = 0; i < 9; ++i) trace.push_back({0.05 * i, 1 + i % 4, 1 + (i * 7) % 11});
  for (const auto policy : {batching::static_batches, batching::continuous}) {
    serving_scheduler s(trace, 3, policy);
    static_cast<void>(drive(s, 0.01));
    for (int r = 0; r < s.requests(); ++r) {
      const auto& times = s.token_times(r);
      ASSERT_EQ(static_cast<int>(times.size()), trace[static_cast<std::size_t>(r)].output_tokens);
      EXPECT_GE(times.front(), trace[static_cast<std::size_t>(r)].arrival_s);
      for (std::size_t i = 1; i < times.size(); ++i) EXPECT_GT(times[i], times[i - 1]);
    }
  }
}

TEST(serving_scheduler, continuous_batching_needs_fewer_launches_on_uneven_outputs) {
  std::vector<request_shape> trace;
  for (int i = 0; i < 8; ++i) trace.push_back({0.0, 2, i % 4 == 0 ? 40 : 4});
  serving_scheduler fixed(trace, 4, batching::static_batches);
  serving_scheduler rolling(trace, 4, batching::continuous);
  EXPECT_LT(drive(rolling, 0.01).size(), drive(fixed, 0.01).size());
}

TEST(serving_scheduler, replays_the_same_launches_after_a_reset) {
  std::vector<request_shape> trace;
  for (int i = 0; i < 6; ++i) trace.push_back({0.01 * i, 2 + i % 3, 3 + i % 5});
  serving_scheduler s(trace, 2, batching::continuous);
  const auto first = drive(s, 0.004);
  s.reset();
  EXPECT_FALSE(s.done());
  EXPECT_EQ(drive(s, 0.004), first);
}

TEST(serving_scheduler, refuses_no_slots_and_empty_requests) {
  EXPECT_THROW(serving_scheduler({{0.0, 1, 1}}, 0, batching::continuous), std::invalid_argument);
  EXPECT_THROW(serving_scheduler({{0.0, 0, 1}}, 1, batching::continuous), std::invalid_argument);
}

}  // namespace
