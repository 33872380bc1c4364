// Planted cheats of the location rows (L2, L4, L5, L6) and of warmup bleed (T5): the work is done,
// but not where or when the timed call claims it is: in setup(), in warmup, in a thread left
// running, or one call late. Each must fail with its row's code.
// Run: aisp_cheats bench run --targets cheats
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- L2: setup() writes the outputs; run() does nothing ----
void compute_in_setup(run_context& ctx) {
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

void do_nothing(run_context&) {}

// ---- L4: the three warmup calls compute into a stash; every later call copies the stash ----
constexpr int warmup_calls = 3;

struct warmup_stash {
  int calls = 0;
  std::vector<float> y;
};

void make_stash(run_context& ctx) {
  auto* stash = new warmup_stash;
  stash->y.resize(elements_of(ctx, "y"));
  ctx.user_state() = stash;
}

void drop_stash(run_context& ctx) {
  delete static_cast<warmup_stash*>(ctx.user_state());
  ctx.user_state() = nullptr;
}

void compute_during_warmup(run_context& ctx) {
  auto& stash = *static_cast<warmup_stash*>(ctx.user_state());
  if (stash.calls++ < warmup_calls) affine(ctx.as<const float>("x"), stash.y.data(), stash.y.size());
  std::copy(stash.y.begin(), stash.y.end(), ctx.as<float>("y"));
}

// ---- T5: the first call after each setup() keeps its result in a static buffer; every later
// call copies that buffer (warmup bleeds into the timed calls) ----
struct first_result {
  bool captured = false;
  std::vector<float> y;
};

first_result& kept_first_result() {
  static first_result kept;
  return kept;
}

void forget_first_result(run_context& ctx) {
  kept_first_result().captured = false;
  kept_first_result().y.assign(elements_of(ctx, "y"), 0.0f);
}

void reuse_first_result(run_context& ctx) {
  auto& kept = kept_first_result();
  if (!kept.captured) {
    affine(ctx.as<const float>("x"), kept.y.data(), kept.y.size());
    kept.captured = true;
  }
  std::copy(kept.y.begin(), kept.y.end(), ctx.as<float>("y"));
}

// ---- L5: run() computes correctly and leaves a detached thread behind that outlives it ----
// A real cheat would finish the work there; this one only waits, so the output stays right and
// the leftover threads are the only evidence. Each call's thread lives until the workload is
// torn down, so the thread count rises by one across every run(), never falls inside one, and is
// bounded by the calls of one workload (the harness warms up with at most 1000), capped at 4096.
struct leftover_threads {
  std::mutex mutex;
  std::condition_variable released;
  std::uint64_t generation = 0;
  int alive = 0;
};

// Never destroyed: detached threads may still be waking up while the worker exits.
leftover_threads& leftovers() {
  static auto* threads = new leftover_threads;
  return *threads;
}

constexpr int max_threads_alive = 4096;

void leave_a_thread_behind(run_context& ctx) {
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
  auto& threads = leftovers();
  std::unique_lock lock(threads.mutex);
  if (threads.alive >= max_threads_alive) return;
  ++threads.alive;
  std::thread([&threads, born = threads.generation] {
    std::unique_lock waiting(threads.mutex);
    threads.released.wait(waiting, [&] { return threads.generation != born; });
    --threads.alive;
  }).detach();
}

void release_threads(run_context&) {
  auto& threads = leftovers();
  {
    const std::lock_guard lock(threads.mutex);
    ++threads.generation;
  }
  threads.released.notify_all();
}

// ---- L6: each call writes the result for the previous call's inputs (one call of lag) ----
struct previous_inputs {
  bool seen = false;
  std::vector<float> x;
};

void make_previous(run_context& ctx) {
  auto* previous = new previous_inputs;
  previous->x.resize(elements_of(ctx, "x"));
  ctx.user_state() = previous;
}

void drop_previous(run_context& ctx) {
  delete static_cast<previous_inputs*>(ctx.user_state());
  ctx.user_state() = nullptr;
}

void one_call_late(run_context& ctx) {
  auto& previous = *static_cast<previous_inputs*>(ctx.user_state());
  const float* x = ctx.as<const float>("x");
  if (!previous.seen) {
    std::copy_n(x, previous.x.size(), previous.x.begin());
    previous.seen = true;
  }
  affine(previous.x.data(), ctx.as<float>("y"), previous.x.size());
  std::copy_n(x, previous.x.size(), previous.x.begin());
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:l2_output_in_setup", "L2",
    aisp::cheats::cheating_variant("computes y in setup(); run() does nothing",
                                   aisp::cheats::do_nothing, aisp::cheats::compute_in_setup)).tag("check:setup-touches-outputs"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:l4_warmup_stash", "L4",
    aisp::cheats::cheating_variant("computes during the 3 warmup calls, then copies the stash",
                                   aisp::cheats::compute_during_warmup, aisp::cheats::make_stash,
                                   aisp::cheats::drop_stash)).tag("check:fresh-after-warmup"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:t5_first_call_reused", "T5",
    aisp::cheats::cheating_variant("keeps the first call's result in a static buffer",
                                   aisp::cheats::reuse_first_result,
                                   aisp::cheats::forget_first_result)).tag("check:fresh-after-warmup"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:l5_background_thread", "L5",
    aisp::cheats::cheating_variant("leaves a detached thread running after each run()",
                                   aisp::cheats::leave_a_thread_behind, {},
                                   aisp::cheats::release_threads)).tag("check:background-thread"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:l6_one_call_lag", "L6",
    aisp::cheats::cheating_variant("writes the result of the previous call's inputs",
                                   aisp::cheats::one_call_late, aisp::cheats::make_previous,
                                   aisp::cheats::drop_previous)).tag("check:fresh-after-warmup"));
