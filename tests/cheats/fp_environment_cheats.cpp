// K4 at run time (Note [floating-point environment]): the candidate runs the baseline's own loop
// with its thread's MXCSR switched to flush-to-zero and denormals-are-zero, as -ffast-math's
// start-up code would, and leaves it so. Its outputs match (the mode changes only subnormal
// results), so only fp-environment sees it. Run: aisp_cheats bench run --targets cheats:k4_flush_to_zero_at_run_time
#include <csignal>
#include <xmmintrin.h>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr unsigned flush_to_zero_and_denormals_are_zero = 0x8040;

void affine_with_flush_to_zero(run_context& ctx) {
  _mm_setcsr(_mm_getcsr() | flush_to_zero_and_denormals_are_zero);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// Note [sampled fp mode]: the same mode set as each call starts and put back before it returns,
// so every reading after setup() or a visit finds the worker's own (red team fourteen: 1.28-2.85x
// on subnormal terms)
// on subnormal terms). Calls of 24 passes (about a millisecond), so the sampler's 2 ms of CPU
// time reach inside them in a short run.
constexpr int passes_a_call = 24;

void affine_passes(run_context& ctx) {
  for (int pass = 0; pass < passes_a_call; ++pass) affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

void affine_with_flush_to_zero_inside_the_call(run_context& ctx) {
  const unsigned before = _mm_getcsr();
  _mm_setcsr(before | flush_to_zero_and_denormals_are_zero);
  affine_passes(ctx);
  _mm_setcsr(before);
}

pair flush_to_zero_inside_each_call_pair(std::string target, std::string what, stage_fn setup) {
  pair declared = elementwise_declaration(std::move(target), "K4");
  declared.summary(cheat_summary("K4", what))
      .add_variant(variant{"baseline", "24 passes of y = 2x + 1", affine_passes, {}, {}, {}, {}, {}, {}, {}})
      .add_variant(cheating_variant(std::move(what), affine_with_flush_to_zero_inside_the_call, std::move(setup)));
  return declared;
}

// ---- Note [sampled fp mode]: the same, after its setup() set every real-time signal to be
// ignored, the sampler's among them ----
void ignore_the_real_time_signals(run_context&) {
  for (int signal_number = SIGRTMIN; signal_number <= SIGRTMAX; ++signal_number) std::signal(signal_number, SIG_IGN);
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:k4_flush_to_zero_at_run_time", "K4",
                                             "switches its thread to flush-to-zero and denormals-are-zero (MXCSR) and stays so",
                                             aisp::cheats::affine_with_flush_to_zero)
                  .tag("check:fp-environment"));
AISP_REGISTER(aisp::cheats::flush_to_zero_inside_each_call_pair(
                  "cheats:k4_flush_to_zero_inside_each_call",
                  "switches its thread to flush-to-zero and denormals-are-zero inside each call and back before returning", {})
                  .tag("check:fp-environment"));
AISP_REGISTER(aisp::cheats::flush_to_zero_inside_each_call_pair(
                  "cheats:k4_flush_to_zero_with_the_sampler_ignored",
                  "ignores every real-time signal from setup(), then flush-to-zero inside each call",
                  aisp::cheats::ignore_the_real_time_signals)
                  .tag("check:fp-environment"));
