// labs/decode's serving schedulers (labs/decode/serving_scheduler.hpp) on a fake clock: what each
// launch runs, when slots free, and that both policies give every request all its tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../../labs/decode/serving_scheduler.hpp"
#include "../../labs/decode/serving_trace.hpp"
#include "../../labs/decode/serving_workload.hpp"

namespace {

using aisp::decode::batching;
using aisp::decode::request_shape;
using aisp::decode::serving_scheduler;

// Runs the scheduler to the end, each launch taking `step_s`; returns the launches' row counts.
std::vector<int> drive(serving_scheduler& s, double step_s) {
  std::vector<int> rows;
  aisp::decode::run_to_end(s, [&](const aisp::decode::serving_launch& launch) {
    rows.push_back(launch.rows());
    return step_s;
  });
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
  EXPECT_THROW(serving_scheduler({{0.0, 1, 1}}, 1, batching::static_batches, 8), std::invalid_argument);
  EXPECT_THROW(serving_scheduler({{0.0, 1, 1}}, 1, batching::continuous, -1), std::invalid_argument);
}

// Every (request, position) a run feeds, in launch order: each prompt position once, then each
// produced token but the last at the position after the one before.
std::vector<std::vector<int>> positions_fed(serving_scheduler& s, double step_s) {
  std::vector<std::vector<int>> fed(static_cast<std::size_t>(s.requests()));
  aisp::decode::run_to_end(s, [&](const aisp::decode::serving_launch& launch) {
    for (int i = 0; i < launch.rows(); ++i)
      fed[static_cast<std::size_t>(launch.row_request[static_cast<std::size_t>(i)])].push_back(launch.row_position[static_cast<std::size_t>(i)]);
    return step_s;
  });
  return fed;
}

std::vector<request_shape> long_and_short_prompts() {
  std::vector<request_shape> trace;
  for (int i = 0; i < 10; ++i) trace.push_back({0.003 * i, i % 3 == 0 ? 37 : 3 + i, 2 + (i * 5) % 9});
  return trace;
}

TEST(serving_scheduler, every_policy_feeds_each_position_once_in_order) {
  const auto trace = long_and_short_prompts();
  for (const int chunk : {0, 1, 8, 64}) {
    for (const auto policy : {batching::static_batches, batching::continuous}) {
      if (chunk > 0 && policy == batching::static_batches) continue;
      serving_scheduler s(trace, 3, policy, chunk);
      const auto fed = positions_fed(s, 0.001);
      for (std::size_t r = 0; r < trace.size(); ++r) {
        std::vector<int> expected(static_cast<std::size_t>(trace[r].prompt_tokens + trace[r].output_tokens - 1));
        for (std::size_t p = 0; p < expected.size(); ++p) expected[p] = static_cast<int>(p);
        EXPECT_EQ(fed[r], expected) << "request " << r << ", chunk " << chunk;
        EXPECT_EQ(static_cast<int>(s.token_times(static_cast<int>(r)).size()), trace[r].output_tokens);
      }
    }
  }
}

TEST(serving_scheduler, chunked_prefill_keeps_the_decodes_in_every_launch_within_the_budget) {
  // Request 0 decodes while request 1's 40-token prompt arrives: with a budget of 8, each launch
  // carries request 0's decode row and 7 of the prompt's rows; without, the prompt stalls it.
  const std::vector<request_shape> trace{{0.0, 2, 12}, {0.002, 40, 3}};
  serving_scheduler chunked(trace, 2, batching::continuous, 8);
  double now = 0;
  const auto* first = chunked.next(now);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->rows(), 2) << "request 0's prompt: 2 rows, within the budget";
  chunked.completed(*first, now += 0.003);
  const auto* second = chunked.next(now);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->row_request, (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(second->row_position[1], 0);
  EXPECT_EQ(second->picks(), 1) << "request 1's prompt is not done: only request 0 picks";
  int launches_with_a_decode = 1;
  for (chunked.completed(*second, now += 0.001); !chunked.done(); now += 0.001) {
    const auto* launch = chunked.next(now);
    ASSERT_NE(launch, nullptr);
    EXPECT_LE(launch->rows(), 8);
    launches_with_a_decode += launch->row_request.front() == 0 ? 1 : 0;
    chunked.completed(*launch, now + 0.001);
  }
  EXPECT_EQ(launches_with_a_decode, 11) << "request 0's 11 decode rows, none stalled";

  serving_scheduler stalling(trace, 2, batching::continuous);
  const auto* prompt_0 = stalling.next(0.0);
  stalling.completed(*prompt_0, 0.003);
  const auto* stall = stalling.next(0.003);
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->rows(), 40) << "the whole prompt, and no decode row";
}

TEST(serving_scheduler, chunked_prefill_shortens_the_longest_gap_between_a_requests_tokens) {
  // On the GPU pair's modeled clock (a launch costs a step a 16 rows: Note [planned schedule]),
  // the worst time between two tokens of a request is the prompts admitted together without
  // chunks, one step with a budget of 16.
  std::vector<request_shape> trace;
  for (int i = 0; i < 12; ++i) trace.push_back({0.002 * i, i % 3 == 0 ? 64 : 5 + i, 24});
  const auto worst_gap = [&](int chunk) {
    serving_scheduler s(trace, 6, batching::continuous, chunk);
    aisp::decode::run_to_end(s, [](const aisp::decode::serving_launch& launch) { return 1e-3 * ((launch.rows() + 15) / 16); });
    double worst = 0;
    for (int r = 0; r < s.requests(); ++r) {
      const auto& times = s.token_times(r);
      for (std::size_t i = 1; i < times.size(); ++i) worst = std::max(worst, times[i] - times[i - 1]);
    }
    return worst;
  };
  EXPECT_NEAR(worst_gap(16), 1e-3, 1e-9);
  EXPECT_GE(worst_gap(0), 4e-3);
}

}  // namespace

namespace {

struct served_trace {
  double makespan_s = 0;  // until the last token
  double tpot_p99_s = 0;  // the requests' time per output token, 99th percentile
  int widest_launch = 0;  // rows
};

// The trace served in 8 slots when a launch of r rows costs cost_s(r); `chunk` > 0: continuous
// batching with prefill chunks of that many rows mixed with the decodes.
template <class Cost>
served_trace serve_costing(const std::vector<request_shape>& trace, batching policy, int chunk, Cost cost_s) {
  serving_scheduler s(trace, 8, policy, chunk);
  served_trace out;
  aisp::decode::run_to_end(s, [&](const aisp::decode::serving_launch& launch) {
    out.widest_launch = std::max(out.widest_launch, launch.rows());
    return cost_s(launch.rows());
  });
  std::vector<double> tpot;
  for (std::size_t r = 0; r < trace.size(); ++r) {
    const auto& times = s.token_times(static_cast<int>(r));
    out.makespan_s = std::max(out.makespan_s, times.back());  // run_to_end's clock also waits for arrivals
    if (times.size() > 1) tpot.push_back(aisp::decode::latency_of(trace[r].arrival_s, times).tpot_s);
  }
  std::sort(tpot.begin(), tpot.end());
  out.tpot_p99_s = tpot.empty() ? 0.0 : tpot[std::min(tpot.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(tpot.size())))];
  return out;
}

// Every launch costs `base_s` + `row_s` a row.
served_trace serve(const std::vector<request_shape>& trace, batching policy, double base_s, double row_s, int chunk = 0) {
  return serve_costing(trace, policy, chunk, [&](int rows) { return base_s + row_s * rows; });
}

double makespan(const std::vector<request_shape>& trace, batching policy, double base_s, double row_s) {
  return serve(trace, policy, base_s, row_s).makespan_s;
}

// A trace of the serving pairs' shape (prompts 8-32) with outputs in [output_min, output_max],
// uniform, or geometric of `output_mean` when it is > 0.
std::vector<request_shape> trace_of(int requests, double rate, int output_max, int output_min, double output_mean = 0.0) {
  aisp::decode::trace_config c;
  c.output_mean = output_mean;
  c.requests = requests;
  c.arrivals_per_s = rate;
  c.prompt_max = 32;
  c.prompt_min = 8;
  c.output_max = output_max;
  c.output_min = output_min;
  c.vocab = 2;
  std::vector<request_shape> shapes;
  for (const auto& r : aisp::decode::make_trace(c)) shapes.push_back({r.arrival_s, static_cast<int>(r.prompt.size()), r.output_tokens});
  return shapes;
}

}  // namespace

// docs/results/issue21.md (continuous_batching): continuous_batching's trace until 2026-12-02 (24
// requests at 40/s, outputs uniform in 32-128, 8 slots) asks for less than the server decodes, so both
// policies mostly wait for arrivals: with a launch costing the batch-1 step whatever its rows
// (the best case for continuous batching), the gain is under 1.25x; a saturated server with
// outputs over a 32x range gains more. A model of the schedule, not a measurement.
TEST(serving_scheduler, the_default_trace_caps_continuous_batchings_gain_below_a_saturated_one) {
  const double step_s = 1.12e-3;  // labs/decode:cuda_graph_step's token, H200, 2026-12-01
  const auto gain = [&](const std::vector<request_shape>& trace) {
    return makespan(trace, batching::static_batches, step_s, 0.0) / makespan(trace, batching::continuous, step_s, 0.0);
  };
  // continuous_batching's benchmark size (labs/decode/continuous_batching.cu), through the pairs' own trace_of.
  const aisp::workload benchmark{aisp::workload_kind::benchmark,
                                 {{"model", 2}, {"requests", 24}, {"rate", 40}, {"prompt_max", 32}, {"output_max", 128}, {"slots", 8}, {"step_us", 1000}}};
  const double default_gain = gain(aisp::decode::shapes_of(benchmark));
  const double saturated_gain = gain(trace_of(48, 400.0, 256, 8));
  RecordProperty("default_trace_gain", std::to_string(default_gain));
  RecordProperty("saturated_wide_trace_gain", std::to_string(saturated_gain));
  EXPECT_GT(default_gain, 1.0);
  EXPECT_LT(default_gain, 1.25) << "the issue's 2x is out of this trace's reach";
  EXPECT_GT(saturated_gain, default_gain + 0.2);
}

// docs/results/issue21-h100-sessions.md (Status): what issue 21's 2x at no worse TPOT p99 asks of the lab, on the
// schedulers' own model. A saturated trace with heavy-tailed outputs (96 requests at 1,000/s,
// outputs geometric of mean 64 up to 512) and prefill chunks of 32 rows mixed into the decode
// launches reach 2x with TPOT p99 equal to static batching's, when a launch costs the batch-1
// step whatever its rows. At the rows' cost measured on the H200 (2026-12-02: static batching's
// 8-row steps ~1.64 ms against the 1.02 ms one-row step, ~0.09 ms a row) neither holds: the
// 8-row step must cost about what the one-row step does. A model of the schedule, not a
// measurement.
TEST(serving_scheduler, the_issues_2x_at_equal_tpot_needs_a_saturated_heavy_tailed_trace_chunks_and_flat_rows) {
  const double step_s = 1.02e-3;  // labs/decode:cuda_graph_step's token, H200, 2026-12-02
  const auto trace = trace_of(96, 1000.0, 512, 4, 64.0);
  const auto compare = [&](double row_s) {
    const auto fixed = serve(trace, batching::static_batches, step_s, row_s);
    const auto chunked = serve(trace, batching::continuous, step_s, row_s, 32);
    return std::pair{fixed.makespan_s / chunked.makespan_s, chunked.tpot_p99_s / fixed.tpot_p99_s};
  };
  const auto [flat_gain, flat_tpot] = compare(0.0);
  const auto [measured_gain, measured_tpot] = compare(0.09e-3);
  RecordProperty("flat_rows_gain", std::to_string(flat_gain));
  RecordProperty("flat_rows_tpot_p99_ratio", std::to_string(flat_tpot));
  RecordProperty("measured_rows_gain", std::to_string(measured_gain));
  RecordProperty("measured_rows_tpot_p99_ratio", std::to_string(measured_tpot));
  EXPECT_GE(flat_gain, 2.0);
  EXPECT_LE(flat_tpot, 1.01) << "chunked decodes every step: TPOT p99 no worse than static batching's";
  EXPECT_LT(measured_gain, 2.0) << "short of the 2x";
  EXPECT_GT(measured_tpot, 1.1) << "full launches cost more a token than static batching's emptying ones";
  const auto whole_prompts = serve(trace, batching::continuous, step_s, 0.0);
  EXPECT_GT(whole_prompts.tpot_p99_s, 1.2 * serve(trace, batching::static_batches, step_s, 0.0).tpot_p99_s)
      << "without chunks, prefill launches stall the decodes";
}

// continuous_batching's benchmark trace since 2026-12-02 (labs/decode/continuous_batching.cu),
// through the pairs' own shapes_of (the trace does not depend on `chunk`: 32 here, as the pair
// had it until the sixth session of 2026-12-02; 16 since): with chunks and a launch cost flat in
// its rows, 2x at TPOT p99 equal to static batching's. A model of the schedule, not a measurement.
TEST(serving_scheduler, the_default_trace_gives_2x_at_equal_tpot_with_chunks_and_flat_rows) {
  const aisp::workload benchmark{aisp::workload_kind::benchmark,
                                 {{"model", 2}, {"requests", 64}, {"rate", 1000}, {"prompt_max", 32}, {"output_max", 256},
                                  {"output_mean", 32}, {"slots", 8}, {"step_us", 1000}, {"chunk", 32}}};
  const auto trace = aisp::decode::shapes_of(benchmark);
  const double step_s = 1.02e-3;  // labs/decode:cuda_graph_step's token, H200, 2026-12-02
  const auto fixed = serve(trace, batching::static_batches, step_s, 0.0);
  const auto chunked = serve(trace, batching::continuous, step_s, 0.0, 32);
  RecordProperty("default_trace_chunked_gain", std::to_string(fixed.makespan_s / chunked.makespan_s));
  EXPECT_GE(fixed.makespan_s / chunked.makespan_s, 2.0);
  EXPECT_LE(chunked.tpot_p99_s, 1.01 * fixed.tpot_p99_s);
  EXPECT_LT(fixed.makespan_s, 1.0) << "a static call under a second: ten samples fit the default --max-time";
}

// docs/results/issue21-h100-sessions.md (Status, 2026-12-02, fourth session): how flat the launch cost must be.
// Launches never exceed the chunk's rows, so with chunks of 12 only launches of up to 12 rows
// need one cost; with chunks of 16, launches of 9-16 rows at the 8-row launch's cost keep TPOT
// p99 at static batching's whatever 1-8 rows cost (H200, 2026-12-02: a step launched and waited
// for took 1.282 ms at one row, 1.765 at 8). A static batch's prefill (up to 8 prompts of 32
// rows) is priced as that many launches of the chunk's width. A model of the schedule, not a
// measurement.
TEST(serving_scheduler, the_2x_at_equal_tpot_needs_launches_as_wide_as_the_chunk_at_the_8_row_cost) {
  const aisp::workload benchmark{aisp::workload_kind::benchmark,
                                 {{"model", 2}, {"requests", 64}, {"rate", 1000}, {"prompt_max", 32}, {"output_max", 256},
                                  {"output_mean", 32}, {"slots", 8}, {"step_us", 1000}, {"chunk", 32}}};
  const auto trace = aisp::decode::shapes_of(benchmark);
  const double one_row_s = 1.282e-3;
  const double eight_rows_s = 1.765e-3;
  // A launch wider than `width` rows (a static batch's prefill) costs what as many launches of
  // `width` rows would: static batching pays its prefills no more than continuous batching pays
  // its chunks.
  const auto launches = [](int rows, int width) { return static_cast<double>((rows + width - 1) / width); };
  // Static batches against chunks of `chunk` rows, launches costing cost_s(rows): the 2x, at no
  // worse TPOT p99, in launches no wider than the chunk.
  const auto expect_2x_at_equal_tpot = [&](int chunk, auto cost_s, const std::string& name) {
    const auto fixed = serve_costing(trace, batching::static_batches, 0, cost_s);
    const auto chunked = serve_costing(trace, batching::continuous, chunk, cost_s);
    RecordProperty(name + "_gain", std::to_string(fixed.makespan_s / chunked.makespan_s));
    EXPECT_LE(chunked.widest_launch, chunk) << name;
    EXPECT_GE(fixed.makespan_s / chunked.makespan_s, 2.0) << name;
    EXPECT_LE(chunked.tpot_p99_s, 1.01 * fixed.tpot_p99_s) << name;
  };
  // Flat up to 12 rows, chunks of 12.
  expect_2x_at_equal_tpot(12, [&](int rows) { return launches(rows, 12) * one_row_s; }, "flat_to_12");
  // The 1-8-row cost as measured, 9-16 rows at the 8-row cost, chunks of 16.
  expect_2x_at_equal_tpot(
      16,
      [&](int rows) {
        return rows > 16 ? launches(rows, 16) * eight_rows_s : one_row_s + (eight_rows_s - one_row_s) * std::min(rows - 1, 7) / 7.0;
      },
      "rising_to_8");
}
