// Planted cheats of the evaluation rows (V1-V6) and of priority elevation (E3): the variant goes
// after the judge rather than the work: a forged answer on stdout, a hang past the deadline, an
// inflated work declaration, a leaked seed, the validation sizes learned by heart, a changed
// environment, a changed priority. Each must fail with its row's code. V8 cannot be registered
// at all: contract_cheats_test.cpp.
// Run: aisp_cheats bench run --targets cheats
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"
#include "support/seeded_fill.hpp"

namespace aisp::cheats {
namespace {

// ---- V1: run() prints a forged judge answer on stdout, then does the work ----
void forge_an_answer(run_context& ctx) {
  std::printf("{\"ok\":true,\"samples\":[]}\n");
  std::fflush(stdout);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- V2: the variant ignores SIGTERM and takes 30 s a call: only a kill ends it ----
void outlive_the_deadline(run_context& ctx) {
  std::signal(SIGTERM, SIG_IGN);
  std::this_thread::sleep_for(std::chrono::seconds(30));
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- V3: both variants are honest; the pair declares twice the bytes it moves ----
[[nodiscard]] pair inflated_work_pair() {
  return elementwise_declaration("cheats:v3_doubled_bytes", "V3")
      .summary(cheat_summary("V3", "declares twice the bytes each call moves"))
      .work([](const workload& w) {
        const auto n = static_cast<double>(w.get("n"));
        return work_amount{.bytes = 2.0 * (4.0 * n + 4.0 * n), .flops = 2.0 * n};
      })
      .add_variant(honest_baseline())
      .add_variant("optimized", "honest loop; the declaration lies", honest_run(affine_math));
}

// ---- V3: the pair declares no bytes at all, which would switch off the traffic check (W3) ----
[[nodiscard]] pair no_bytes_pair() {
  return elementwise_declaration("cheats:v3_declares_no_bytes", "V3")
      .summary(cheat_summary("V3", "declares FLOPs and no bytes: nothing for the traffic check to hold a variant to"))
      .work([](const workload& w) { return work_amount{.bytes = 0, .flops = 2.0 * static_cast<double>(w.get("n"))}; })
      .add_variant(honest_baseline())
      .add_variant("optimized", "honest loop; the declaration leaves the traffic out", honest_run(affine_math));
}

// ---- V4: the variant knows the harness's generator and its default seed (42), so setup()
// regenerates the test inputs without reading them and answers from that; run() copies ----
constexpr std::uint64_t leaked_seed = 42;

struct leaked_answers {
  std::vector<float> y;
};

void regenerate_from_leaked_seed(run_context& ctx) {
  auto* answers = new leaked_answers;
  std::vector<float> x(elements_of(ctx, "x"));
  fill_seeded(dtype::f32, init_distribution::uniform_signed, buffer_stream_id(leaked_seed, "x"),
              x.data(), x.size());
  answers->y.resize(x.size());
  affine(x.data(), answers->y.data(), x.size());
  ctx.user_state() = answers;
}

void copy_leaked_answers(run_context& ctx) {
  const auto* answers = static_cast<const leaked_answers*>(ctx.user_state());
  std::copy(answers->y.begin(), answers->y.end(), ctx.as<float>("y"));
}

void drop_leaked_answers(run_context& ctx) {
  delete static_cast<leaked_answers*>(ctx.user_state());
  ctx.user_state() = nullptr;
}

// ---- V5: right on the declared validation sizes, which it knows by heart; a copy of x elsewhere ----
void validation_sizes_only(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  if (n == 1 || n == 7 || n == 1000) {
    affine(x, y, n);
    return;
  }
  std::copy_n(x, n, y);
}

// ---- V6: run() rewrites the worker's environment (a budget the judge might read) ----
// A new value on every call, so each call changes the environment, not only the first.
void rewrite_environment(run_context& ctx) {
  static long calls = 0;
  setenv("AISP_MAX_TIME", std::to_string(1000 + calls++).c_str(), 1);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

// ---- E3: run() changes the worker's scheduling priority on every call ----
// Each call adds 1 to the niceness (allowed without privileges); at 19 it wraps back to the
// niceness the worker started with, which takes privilege (root, CAP_SYS_NICE or RLIMIT_NICE).
// Privileged, the value changes on every call; unprivileged, it climbs to 19 within the first
// warmup and stays there, unlike the other variants' workers.
void change_priority(run_context& ctx) {
  static const int start_niceness = getpriority(PRIO_PROCESS, 0);
  const int niceness = getpriority(PRIO_PROCESS, 0);
  setpriority(PRIO_PROCESS, 0, niceness < 19 ? niceness + 1 : start_niceness);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v1_forged_answer", "V1",
                                             "prints a forged judge answer on stdout",
                                             aisp::cheats::forge_an_answer).tag("check:stdout-write"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v2_ignores_sigterm", "V2",
                                             "ignores SIGTERM and sleeps 30 s per call",
                                             aisp::cheats::outlive_the_deadline).tag("check:worker-timeout"));
AISP_REGISTER(aisp::cheats::inflated_work_pair().tag("check:declared-work"));
AISP_REGISTER(aisp::cheats::no_bytes_pair().tag("check:declared-work"));
AISP_REGISTER(aisp::cheats::elementwise_pair(
    "cheats:v4_leaked_seed", "V4",
    aisp::cheats::cheating_variant("regenerates the inputs from the default seed in setup()",
                                   aisp::cheats::copy_leaked_answers,
                                   aisp::cheats::regenerate_from_leaked_seed,
                                   aisp::cheats::drop_leaked_answers)).tag("check:fresh-after-setup"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v5_validation_sizes_only", "V5",
                                             "computes only at the declared validation sizes",
                                             aisp::cheats::validation_sizes_only).tag("check:held-out"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:v6_sets_environment", "V6",
                                             "sets AISP_MAX_TIME to 1000, 1001, ... in run()",
                                             aisp::cheats::rewrite_environment).tag("check:environment-change"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:e3_lowers_priority", "E3",
                                             "adds 1 to its niceness on every call",
                                             aisp::cheats::change_priority).tag("check:priority-change"));
