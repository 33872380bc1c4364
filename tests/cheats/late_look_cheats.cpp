// Note [late look] (src/runner/sampling_rounds.cpp): a candidate fast only for its first calls at
// the benchmark size in its process, and thirty passes after (its 256 KB stay in cache, so the late
// calls run 5-10x slower, not 30x): the sampling never reaches
// the second regime; the calls the judge makes after it do. Red team five's (1.78x, 1500 calls)
// passed every check before.
#include <atomic>
#include <cstddef>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// More calls than a worker of the suite's run (--max-time 0.3) makes at the benchmark size before
// the late look (~250 on a 2-core machine, 2026-12-04), far fewer than the look's back-to-back
// calls (5,000-11,000 of ~27 us).
constexpr long honeymoon_calls = 2000;

std::atomic<long> benchmark_calls{0};

void fast_then_slow(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  const bool late = n == static_cast<std::size_t>(benchmark_elements) && benchmark_calls.fetch_add(1) >= honeymoon_calls;
  for (int pass = 0; pass < (late ? 30 : 1); ++pass) {
    affine(x, y, n);
    keep_alive(y);
  }
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:x7_fast_only_while_sampled", "X7",
                                             "the same loop, thirty times over once it has made more calls than the judge samples",
                                             aisp::cheats::fast_then_slow)
                  .tag("check:late-look"));
