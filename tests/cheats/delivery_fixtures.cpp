// Note [witnessed deliveries] end to end on the host (tests/cheats/deliveries_test.cpp): a toy
// server in real time. Requests arrive `gap_us` apart; a launch spins `step_us` and makes the next
// token of every request that has arrived and is unfinished, then hands them over with
// run_context::deliver(). The pair is judged by the p99 of the judge's own `tpot_s`.
// - deliveries:honest: the baseline's launch costs three times the optimized one's: `faster` on TPOT.
// - deliveries:records_its_own_tpot: the optimized variant also records a quarter of its TPOT.
// - deliveries:delivers_before_making: it delivers each launch's tokens before it makes them.
// - deliveries:delivers_before_arrival: it makes every token at once, then delivers each
//   request's first token at once, before the request has arrived.
// - deliveries:hides_the_slow_tokens: it delivers each request's first token only.
// Each cheat's call ends in a contract_error that says what it did; the pair fails.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace aisp::cheats {
namespace {

using clock_type = std::chrono::steady_clock;

enum class dodge : unsigned char { none, records_its_own_tpot, delivers_before_making, delivers_before_arrival, hides_the_slow_tokens };

// Token `index` of a request follows from its prompt's draw and its token index - 1.
[[nodiscard]] int toy_token(float prompt, int index, int previous) {
  return (static_cast<int>(prompt * 97.0f) * 31 + index * 7 + previous) % 97;
}

// What run() reuses from call to call: run() allocates nothing (M1).
struct live_server {
  std::vector<int> produced;
  std::vector<int> picked;
};

void setup_live(run_context& ctx) {
  auto& server = make_state<live_server>(ctx);
  server.produced.resize(static_cast<std::size_t>(ctx.param("requests")));
  server.picked.reserve(server.produced.size());
}

void spin_for(std::chrono::microseconds span) {
  const auto until = clock_type::now() + span;
  while (clock_type::now() < until) {
  }
}

// Every unfinished request that has arrived gets its next token.
void make_tokens(run_context& ctx, live_server& server, double now_s) {
  const auto width = static_cast<int>(ctx.param("output_max"));
  const double gap_s = static_cast<double>(ctx.param("gap_us")) * 1e-6;
  int* tokens = ctx.as<int>("tokens");
  server.picked.clear();
  for (int r = 0; r < static_cast<int>(server.produced.size()); ++r) {
    auto& made = server.produced[static_cast<std::size_t>(r)];
    if (made == width || r * gap_s > now_s) continue;
    const std::int64_t at = std::int64_t{r} * width + made;
    tokens[at] = toy_token(ctx.as<const float>("prompt")[r], made, made == 0 ? 0 : tokens[at - 1]);
    ++made;
    server.picked.push_back(r);
  }
}

template <int StepsPerLaunch, dodge Dodge>
void serve_live(run_context& ctx) {
  auto& server = state_of<live_server>(ctx);
  const auto width = static_cast<int>(ctx.param("output_max"));
  const int requests = static_cast<int>(server.produced.size());
  const double gap_s = static_cast<double>(ctx.param("gap_us")) * 1e-6;
  const auto step = std::chrono::microseconds(ctx.param("step_us") * StepsPerLaunch);
  std::fill(ctx.as<int>("tokens"), ctx.as<int>("tokens") + std::int64_t{requests} * width, -1);
  std::fill(server.produced.begin(), server.produced.end(), 0);
  const auto start = clock_type::now();
  const auto now_s = [&] { return std::chrono::duration<double>(clock_type::now() - start).count(); };
  if constexpr (Dodge == dodge::delivers_before_arrival) {
    for (int t = 0; t < width; ++t) make_tokens(ctx, server, 1e30);  // everything, ahead of time
    for (int r = 0; r < requests; ++r) ctx.deliver(r);             // first tokens, none waited for
    for (int r = 0; r < requests; ++r) {
      for (int t = 1; t < width; ++t) ctx.deliver(r);
    }
    return;
  }
  const auto finished = [&] { return std::all_of(server.produced.begin(), server.produced.end(), [&](int made) { return made == width; }); };
  double total_tpot_s = 0;
  while (!finished()) {
    const int waiting = static_cast<int>(std::count(server.produced.begin(), server.produced.end(), 0));
    const int next_arrival = requests - waiting;
    const bool idle = std::none_of(server.produced.begin(), server.produced.end(), [&](int made) { return made > 0 && made < width; });
    if (idle && next_arrival < requests && next_arrival * gap_s > now_s())  // nothing to run until the next arrival
      std::this_thread::sleep_for(std::chrono::duration<double>(next_arrival * gap_s - now_s()));
    const double launch_s = now_s();
    if constexpr (Dodge == dodge::delivers_before_making) {
      std::vector<int>& ahead = server.picked;  // the requests this launch will serve, stamped first
      ahead.clear();
      for (int r = 0; r < requests; ++r)
        if (server.produced[static_cast<std::size_t>(r)] < width && r * gap_s <= launch_s) ahead.push_back(r);
      ctx.deliver(ahead);
    }
    spin_for(step);
    make_tokens(ctx, server, launch_s);
    total_tpot_s += static_cast<double>(step.count()) * 1e-6;
    if constexpr (Dodge == dodge::hides_the_slow_tokens) {
      for (int r : server.picked)
        if (server.produced[static_cast<std::size_t>(r)] == 1) ctx.deliver(r);
    } else if constexpr (Dodge != dodge::delivers_before_making) {
      ctx.deliver(server.picked);
    }
  }
  if constexpr (Dodge == dodge::records_its_own_tpot) ctx.record("tpot_s", total_tpot_s / (4.0 * width));
}

void live_reference(reference_io& io) {
  const auto requests = static_cast<int>(io.param("requests"));
  const auto width = static_cast<int>(io.param("output_max"));
  const auto prompts = io.input("prompt");
  const auto tokens = io.output("tokens");
  for (int r = 0; r < requests; ++r) {
    int previous = 0;
    for (int t = 0; t < width; ++t)
      tokens[static_cast<std::size_t>(r * width + t)] = previous = toy_token(static_cast<float>(prompts[static_cast<std::size_t>(r)]), t, previous);
  }
}

[[nodiscard]] pair live_pair(const std::string& name, const std::string& what, stage_fn optimized) {
  return pair("deliveries:" + name)
      .summary("a toy server in real time, its tokens delivered to the judge, judged by the TPOT the judge times")
      .on(backend::host)
      // Steps of 1 ms: a real-time toy on a 2-core machine meets stalls of 2-3 ms, which at 100 us
      // steps put one request's TPOT 2.6x the baseline's worst (W12), and at 400 us its TTFT 1.6x
      // (2026-12-06).
      .benchmark_size({{"requests", 12}, {"output_max", 6}, {"gap_us", 4000}, {"step_us", 1000}})
      .validation_size({{"requests", 2}, {"output_max", 3}, {"gap_us", 300}, {"step_us", 50}})
      .validation_size({{"requests", 3}, {"output_max", 1}, {"gap_us", 300}, {"step_us", 50}})
      .held_out_size({{"requests", 3}, {"output_max", 4}, {"gap_us", 300}, {"step_us", 50}})
      .input("prompt", dtype::f32, std::vector<std::string>{"requests"}, init_distribution::uniform_unit)
      .output("tokens", dtype::i32, {"requests", "output_max"})
      .work([](const workload& w) { return work_amount{.bytes = 4.0 * static_cast<double>(w.get("requests") * w.get("output_max")), .flops = 0}; })
      .reference(live_reference)
      .delivers({"tokens", [](const workload& w) { return static_cast<int>(w.get("requests")); },
                 [](const workload& w, int) { return static_cast<int>(w.get("output_max")); },
                 [](const workload& w, int r, int i) { return std::int64_t{r} * w.get("output_max") + i; },
                 [](const workload& w, int r) { return static_cast<double>(r * w.get("gap_us")) * 1e-6; }})
      .judge_by_recorded("tpot_s", 0.99, "a server's tokens are judged by how soon each follows the last")
      .add_variant(kit::with_state("baseline", "a launch of three steps", serve_live<3, dodge::none>, setup_live, release_state<live_server>))
      .add_variant(kit::with_state("optimized", what, std::move(optimized), setup_live, release_state<live_server>));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::live_pair("honest", "a launch of one step", aisp::cheats::serve_live<1, aisp::cheats::dodge::none>));
AISP_REGISTER(aisp::cheats::live_pair("records_its_own_tpot", "a launch of two steps, and a quarter of its TPOT recorded by itself",
                                      aisp::cheats::serve_live<2, aisp::cheats::dodge::records_its_own_tpot>));
AISP_REGISTER(aisp::cheats::live_pair("delivers_before_making", "a launch of two steps, its tokens delivered before it makes them",
                                      aisp::cheats::serve_live<2, aisp::cheats::dodge::delivers_before_making>));
AISP_REGISTER(aisp::cheats::live_pair("delivers_before_arrival", "every token made at once, each first token delivered before its request arrives",
                                      aisp::cheats::serve_live<2, aisp::cheats::dodge::delivers_before_arrival>));
AISP_REGISTER(aisp::cheats::live_pair("hides_the_slow_tokens", "a launch of two steps, only each request's first token delivered",
                                      aisp::cheats::serve_live<2, aisp::cheats::dodge::hides_the_slow_tokens>));
