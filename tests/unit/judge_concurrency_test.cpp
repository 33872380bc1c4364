// Issue 17: the judge's references computed once and ahead, and the slots' checks gathered in
// slot order whatever order their threads finish in.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "runner/slot_threads.hpp"
#include "verify/reference_cache.hpp"

namespace {

std::atomic<int> reference_runs{0};
std::atomic<int> running_now{0};
std::atomic<int> most_at_once{0};

// y = 2x; slow enough that overlapping askers really overlap.
aisp::pair doubling_pair(bool fails) {
  return aisp::pair("test:doubling")
      .validation_size({{"n", 64}})
      .input("x", aisp::dtype::f32, std::vector<std::string>{"n"})
      .output("y", aisp::dtype::f32, std::vector<std::string>{"n"})
      .reference([fails](aisp::reference_io& io) {
        ++reference_runs;
        const int now = ++running_now;
        for (int seen = most_at_once.load(); now > seen && !most_at_once.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        --running_now;
        if (fails) throw std::runtime_error("reference broke");
        const auto x = io.input("x");
        auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2 * x[i];
      });
}

aisp::workload sized(std::int64_t n) {
  aisp::workload w;
  w.params = {{"n", n}};
  return w;
}

TEST(reference_cache, computes_each_reference_once_however_many_variants_ask_at_once) {
  reference_runs = 0;
  const auto declared = doubling_pair(false);
  aisp::verify::reference_cache cache(declared, 0);
  const aisp::verify::reference_inputs inputs{7, aisp::input_values::declared, {}};
  std::vector<std::shared_ptr<const aisp::verify::reference_outputs>> seen(4);
  {
    std::vector<std::jthread> askers;
    for (std::size_t i = 0; i < seen.size(); ++i) askers.emplace_back([&, i] { seen[i] = cache.get(sized(64), inputs); });
  }
  EXPECT_EQ(reference_runs.load(), 1);
  for (const auto& s : seen) EXPECT_EQ(s, seen.front());
  const auto x = aisp::verify::generate_inputs(declared, sized(64), inputs).at("x");
  EXPECT_DOUBLE_EQ(seen.front()->at("y")[5], 2 * x[5]);
}

TEST(reference_cache, tells_apart_seeds_sizes_and_overridden_elements) {
  reference_runs = 0;
  const auto declared = doubling_pair(false);
  aisp::verify::reference_cache cache(declared, 1);
  aisp::verify::reference_inputs inputs{7, aisp::input_values::declared, {}};
  const auto plain = cache.get(sized(64), inputs);
  (void)cache.get(sized(65), inputs);
  inputs.overrides.push_back({"x", 3, 0.25});
  const auto jittered = cache.get(sized(64), inputs);
  EXPECT_DOUBLE_EQ(jittered->at("y")[3], 0.5);
  EXPECT_NE(plain->at("y")[3], 0.5);
  (void)cache.get(sized(64), {8, aisp::input_values::declared, {}});
  EXPECT_EQ(reference_runs.load(), 4);
  EXPECT_EQ(cache.computed(), 4u);
}

TEST(reference_cache, prefetches_on_other_cores_but_never_more_at_once_than_allowed) {
  reference_runs = 0;
  most_at_once = 0;
  const auto declared = doubling_pair(false);
  aisp::verify::reference_cache cache(declared, 2);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) cache.prefetch(sized(64), {seed, aisp::input_values::declared, {}});
  for (std::uint64_t seed = 1; seed <= 6; ++seed) (void)cache.get(sized(64), {seed, aisp::input_values::declared, {}});
  EXPECT_EQ(reference_runs.load(), 6);
  EXPECT_LE(most_at_once.load(), 2);
}

TEST(reference_cache, a_failing_reference_fails_every_asker_and_a_prefetch_swallows_nothing) {
  const auto declared = doubling_pair(true);
  aisp::verify::reference_cache cache(declared, 0);
  const aisp::verify::reference_inputs inputs{7, aisp::input_values::declared, {}};
  cache.prefetch(sized(64), inputs);
  EXPECT_THROW((void)cache.get(sized(64), inputs), std::runtime_error);
  EXPECT_THROW((void)cache.get(sized(64), inputs), std::runtime_error);
}

aisp::check_result named(const std::string& variant, const std::string& check) {
  aisp::check_result c;
  c.variant = variant;
  c.check = check;
  c.passed = true;
  return c;
}

TEST(for_each_slot_concurrently, gathers_checks_in_slot_order_whichever_thread_ends_first) {
  std::vector<aisp::variant_slot> slots(3);
  slots[0].label = "baseline";
  slots[1].label = "optimized";
  slots[2].label = "vectorized";
  std::vector<aisp::check_result> checks;
  aisp::for_each_slot_concurrently(aisp::all_slots(slots), checks, 0, [](aisp::variant_slot& slot, std::vector<aisp::check_result>& mine) {
    // The first slot finishes last.
    std::this_thread::sleep_for(std::chrono::milliseconds(slot.label == "baseline" ? 60 : 1));
    mine.push_back(named(slot.label, "a"));
    mine.push_back(named(slot.label, "b"));
  });
  ASSERT_EQ(checks.size(), 6u);
  EXPECT_EQ(checks[0].variant, "baseline");
  EXPECT_EQ(checks[1].check, "b");
  EXPECT_EQ(checks[2].variant, "optimized");
  EXPECT_EQ(checks[5].variant, "vectorized");
}

TEST(for_each_slot_concurrently, rethrows_the_first_failure_in_slot_order_after_every_slot_ended) {
  std::vector<aisp::variant_slot> slots(3);
  slots[0].label = "baseline";
  slots[1].label = "optimized";
  slots[2].label = "vectorized";
  std::atomic<int> finished{0};
  std::vector<aisp::check_result> checks;
  try {
    aisp::for_each_slot_concurrently(aisp::all_slots(slots), checks, 0, [&](aisp::variant_slot& slot, std::vector<aisp::check_result>& mine) {
      mine.push_back(named(slot.label, "before"));
      if (slot.label == "vectorized") throw std::runtime_error("vectorized failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (slot.label == "optimized") throw std::runtime_error("optimized failed");
      ++finished;
    });
    FAIL() << "no failure rethrown";
  } catch (const std::runtime_error& failure) {
    EXPECT_STREQ(failure.what(), "optimized failed");
  }
  EXPECT_EQ(finished.load(), 1);  // the baseline ran to its end
  ASSERT_EQ(checks.size(), 2u);   // the baseline's and the failing slot's own, as a sequential run records
  EXPECT_EQ(checks[1].variant, "optimized");
}

TEST(for_each_slot_concurrently, one_thread_stops_at_the_first_failure_as_a_loop_would) {
  std::vector<aisp::variant_slot> slots(2);
  slots[0].label = "baseline";
  slots[1].label = "optimized";
  int ran = 0;
  std::vector<aisp::check_result> checks;
  EXPECT_THROW(aisp::for_each_slot_concurrently(aisp::all_slots(slots), checks, 1,
                                                [&](aisp::variant_slot&, std::vector<aisp::check_result>&) {
                                                  ++ran;
                                                  throw std::runtime_error("stop");
                                                }),
               std::runtime_error);
  EXPECT_EQ(ran, 1);
}

}  // namespace
