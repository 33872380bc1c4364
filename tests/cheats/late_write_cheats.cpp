// Planted cheats of issue 16 (work finished after run() returned, and allocations outside
// operator new). A helper thread started in setup() takes a share of every call and finishes it
// after run() returned, where no timed span sees it (Note [late writes], Note [worker CPU time]);
// run() allocates its scratch through the C allocation family (Note [allocation counter]).
// Run: aisp_cheats bench run --targets cheats
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// One call's worth of work handed to the helper: [begin, end) of x into y.
struct handoff {
  std::atomic<unsigned> calls{0};
  std::atomic<unsigned> done{0};
  const float* x = nullptr;
  float* y = nullptr;
  std::size_t begin = 0;
  std::size_t end = 0;
  int pause_us = 0;  // how long the helper waits before it starts a posted call
};

// A helper started in setup(): it waits for run() to post a call and computes the posted range.
// run() posts and returns; the next call waits for the previous one, so no output is ever left
// unfinished for long, and every verification sees complete outputs (it reads a moment later).
struct helper {
  handoff work;
  std::thread thread;

  helper() {
    thread = std::thread([this] {
      // Blocked in a futex between calls: no CPU while the worker waits for the judge.
      for (unsigned seen = 0;;) {
        work.calls.wait(seen, std::memory_order_acquire);
        seen = work.calls.load(std::memory_order_acquire);
        if (work.pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(work.pause_us));
        affine(work.x + work.begin, work.y + work.begin, work.end - work.begin);
        work.done.store(seen, std::memory_order_release);
        work.done.notify_one();
      }
    });
    thread.detach();
  }

  void post(const float* x, float* y, std::size_t begin, std::size_t end) {
    const unsigned previous = work.calls.load(std::memory_order_relaxed);
    for (unsigned done = work.done.load(std::memory_order_acquire); done != previous;
         done = work.done.load(std::memory_order_acquire))
      work.done.wait(done, std::memory_order_acquire);
    work.x = x;
    work.y = y;
    work.begin = begin;
    work.end = end;
    work.calls.store(previous + 1, std::memory_order_release);
    work.calls.notify_one();
  }
};

helper* the_helper = nullptr;

void start_helper(run_context&) {
  if (the_helper == nullptr) the_helper = new helper();
}

// The same helper, which lets a millisecond pass before it writes: every write lands after
// run() returned, whatever the machine's load or its wake-up latency.
void start_a_pausing_helper(run_context& ctx) {
  start_helper(ctx);
  the_helper->work.pause_us = 1000;
}

// ---- L5: run() computes the first half and hands the second half to the helper ----
void half_after_return(run_context& ctx) {
  const auto n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  affine(x, y, n / 2);
  the_helper->post(x, y, n / 2, n);
}

// ---- L5: run() only posts the call: the helper does all of it after run() returned ----
void all_after_return(run_context& ctx) {
  the_helper->post(ctx.as<const float>("x"), ctx.as<float>("y"), 0, elements_of(ctx, "x"));
}

// ---- S7 / M1: the C allocation family in run() ----
void malloc_scratch(run_context& ctx) {
  const auto n = elements_of(ctx, "x");
  auto* scratch = static_cast<float*>(std::malloc(n * sizeof(float)));
  if (scratch == nullptr) throw std::bad_alloc();
  affine(ctx.as<const float>("x"), scratch, n);
  keep_alive(scratch);
  std::copy(scratch, scratch + n, ctx.as<float>("y"));
  std::free(scratch);
}

void posix_memalign_output(run_context& ctx) {
  const auto n = elements_of(ctx, "x");
  void* raw = nullptr;
  if (posix_memalign(&raw, 64, n * sizeof(float)) != 0) throw std::bad_alloc();
  auto* own = static_cast<float*>(raw);
  affine(ctx.as<const float>("x"), own, n);
  keep_alive(own);
  std::copy(own, own + n, ctx.as<float>("y"));
  std::free(raw);
}

// Over-aligned operator new: a separate overload that was not counted before issue 16.
struct alignas(128) wide_block {
  float values[32];
};

void aligned_new_scratch(run_context& ctx) {
  const auto n = elements_of(ctx, "x");
  const std::unique_ptr<wide_block[]> blocks(new wide_block[(n + 31) / 32]);
  auto* scratch = &blocks[0].values[0];
  affine(ctx.as<const float>("x"), scratch, n);
  keep_alive(scratch);
  std::copy(scratch, scratch + n, ctx.as<float>("y"));
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

// Named by worker-cpu, not late-write: at the validation sizes its helper's half is a
// microsecond of work and, on an idle machine, done before the write barrier arms (a CI run,
// 2026-12-03); the timed spans see its CPU on every call.
AISP_REGISTER(cheats::elementwise_pair(
    "cheats:l5_helper_finishes_after_return", "L5",
    cheats::cheating_variant("computes half and leaves the other half to a helper thread started in setup()",
                             cheats::half_after_return, cheats::start_helper)).tag("check:worker-cpu"));
AISP_REGISTER(cheats::elementwise_pair(
    "cheats:l5_helper_writes_after_a_pause", "L5",
    cheats::cheating_variant("computes half and leaves the other half to a helper thread that writes a millisecond later",
                             cheats::half_after_return, cheats::start_a_pausing_helper)).tag("check:late-write"));
AISP_REGISTER(cheats::elementwise_pair(
    "cheats:l5_helper_does_the_call_after_return", "L5",
    // Named by worker-cpu, not late-write: on an idle machine its helper can wake and finish a
    // verified call before the write barrier arms (2026-12-03); the timed visits still see its CPU.
    cheats::cheating_variant("posts the call to a helper thread started in setup() and returns",
                             cheats::all_after_return, cheats::start_helper)).tag("check:worker-cpu"));
AISP_REGISTER(cheats::elementwise_pair("cheats:s7_mallocs_scratch_per_call", "S7",
                                       "mallocs and frees a scratch buffer per call", cheats::malloc_scratch)
                  .tag("check:allocation-in-run"));
AISP_REGISTER(cheats::elementwise_pair("cheats:m1_posix_memalign_output", "M1",
                                       "computes into its own posix_memalign buffer and copies it out",
                                       cheats::posix_memalign_output)
                  .tag("check:allocation-in-run"));
AISP_REGISTER(cheats::elementwise_pair("cheats:s7_aligned_new_scratch", "S7",
                                       "allocates over-aligned scratch with operator new per call",
                                       cheats::aligned_new_scratch)
                  .tag("check:allocation-in-run"));
