// Planted cheats of a serving scheduler (issue 21): labs/decode's schedulers
// (labs/decode/serving_scheduler.hpp) run a toy model on the host, whose output is each request's
// greedy tokens (requests, output_max) as in labs/decode:continuous_batching. The honest baseline
// batches statically; each cheat batches continuously and serves less: a scheduler that drops the
// requests arriving last shows as a shrunken batch (W5), one that stops every request at half its
// tokens as a truncated sequence (W6): the tokens are checked like any output. One that holds a
// request back with every token right is caught by the recorded times to first token (W12),
// also where the pair declares a TTFT trade (Note [declared latency trade]).
// Run: aisp_cheats bench run --targets cheats:w5_serving_drops_requests cheats:w6_serving_shortens_outputs
//      cheats:w12_serving_starves_a_request cheats:w12_serving_starves_behind_a_declared_trade
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../../labs/decode/decoder_reference.hpp"
#include "../../labs/decode/serving_scheduler.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr int toy_vocab = 97;

// The toy model: token i of a request follows from its prompt's ids and its token i - 1.
[[nodiscard]] int toy_token(int prompt_sum, int index, int previous) { return (prompt_sum * 31 + index * 7 + previous) % toy_vocab; }

[[nodiscard]] int prompt_sum(const float* draws, std::size_t row, std::size_t prompt) {
  int sum = 0;
  for (std::size_t p = 0; p < prompt; ++p) sum += decode::token_of_draw(draws[row * prompt + p], toy_vocab);
  return sum;
}

// Requests arrive 20 ms apart, each with the whole prompt width; a launch takes 1 ms of the fake
// clock, so an honest scheduler is never behind and every first token comes soon after its arrival.
constexpr double arrival_gap_s = 20e-3;
constexpr double launch_s = 1e-3;

// A variant's scheduler and which request each of its ids serves, made in setup(): run()
// allocates nothing (M1), as in labs/decode:continuous_batching.
struct toy_server {
  decode::serving_scheduler scheduler;
  std::vector<int> request_of;  // scheduler id -> request
};

[[nodiscard]] decode::request_shape shape_at(const run_context& ctx, double arrival_s, int output_tokens) {
  return {arrival_s, static_cast<int>(ctx.param("prompt_max")), output_tokens};
}

enum class cheat : unsigned char { none, drops_late_requests, shortens_outputs, starves_the_first };

template <decode::batching Policy, cheat Cheat>
void setup_server(run_context& ctx) {
  const auto requests = static_cast<int>(ctx.param("requests"));
  const auto width = static_cast<int>(ctx.param("output_max"));
  const int served = Cheat == cheat::drops_late_requests ? requests - requests / 2 : requests;
  const int output_tokens = Cheat == cheat::shortens_outputs ? width - width / 2 : width;
  std::vector<decode::request_shape> trace;
  std::vector<int> request_of;
  for (int r = 0; r < served; ++r) {
    // W12: request 0 is kept back until the last request has arrived (and waits behind it).
    const int request = Cheat == cheat::starves_the_first ? (r + 1) % served : r;
    const double admitted_s = Cheat == cheat::starves_the_first && request == 0 ? arrival_gap_s * (served - 1) : arrival_gap_s * request;
    trace.push_back(shape_at(ctx, admitted_s, output_tokens));
    request_of.push_back(request);
  }
  make_state<toy_server>(ctx, decode::serving_scheduler(std::move(trace), 4, Policy), std::move(request_of));
}

// Serves what the variant's scheduler admits on the fake clock and records each request's time
// to first token from its real arrival; every token slot it does not serve holds -1.
void serve(run_context& ctx) {
  const auto prompt = static_cast<std::size_t>(ctx.param("prompt_max"));
  const auto width = static_cast<std::size_t>(ctx.param("output_max"));
  const float* draws = ctx.as<const float>("prompt");
  int* tokens = ctx.as<int>("tokens");
  for (std::size_t i = 0; i < static_cast<std::size_t>(ctx.param("requests")) * width; ++i) tokens[i] = -1;
  auto& server = state_of<toy_server>(ctx);
  auto& scheduler = server.scheduler;
  decode::run_to_end(scheduler, [&](const decode::serving_launch& launch) {
    for (int i = 0; i < launch.picks(); ++i) {
      const auto r = static_cast<std::size_t>(server.request_of[static_cast<std::size_t>(launch.pick_request[static_cast<std::size_t>(i)])]);
      const auto index = static_cast<std::size_t>(launch.pick_index[static_cast<std::size_t>(i)]);
      const int previous = index == 0 ? 0 : tokens[r * width + index - 1];
      tokens[r * width + index] = toy_token(prompt_sum(draws, r, prompt), static_cast<int>(index), previous);
    }
    return launch_s;
  });
  for (int id = 0; id < scheduler.requests(); ++id)
    ctx.record("ttft_s", scheduler.token_times(id).front() - arrival_gap_s * server.request_of[static_cast<std::size_t>(id)]);
}

void toy_reference(reference_io& io) {
  const auto requests = static_cast<std::size_t>(io.param("requests"));
  const auto prompt = static_cast<std::size_t>(io.param("prompt_max"));
  const auto width = static_cast<std::size_t>(io.param("output_max"));
  const auto draws = io.input("prompt");
  const auto tokens = io.output("tokens");
  for (std::size_t r = 0; r < requests; ++r) {
    int sum = 0;
    for (std::size_t p = 0; p < prompt; ++p) sum += decode::token_of_draw(draws[r * prompt + p], toy_vocab);
    int previous = 0;
    for (std::size_t i = 0; i < width; ++i) {
      previous = (sum * 31 + static_cast<int>(i) * 7 + previous) % toy_vocab;
      tokens[r * width + i] = previous;
    }
  }
}

[[nodiscard]] pair serving_pair(const std::string& target, const std::string& code, const std::string& what, stage_fn cheat_setup) {
  return pair(target)
      .summary("a serving scheduler's greedy tokens, (requests, output_max), -1 where a request has no token")
      .on(backend::host)
      .benchmark_size({{"requests", 256}, {"prompt_max", 16}, {"output_max", 64}})
      .validation_size({{"requests", 2}, {"prompt_max", 3}, {"output_max", 4}})
      .validation_size({{"requests", 7}, {"prompt_max", 5}, {"output_max", 9}})
      .held_out_size({{"requests", 5}, {"prompt_max", 4}, {"output_max", 6}})
      .input("prompt", dtype::f32, std::vector<std::string>{"requests", "prompt_max"}, init_distribution::uniform_unit)
      .output("tokens", dtype::i32, {"requests", "output_max"})
      .work([](const workload& w) {
        return work_amount{.bytes = 4.0 * static_cast<double>(w.get("requests") * (w.get("prompt_max") + w.get("output_max"))), .flops = 0};
      })
      .reference(toy_reference)
      .tag("cheat:" + code)
      .add_variant(kit::with_state("baseline", "static batches of 4 arrived requests, each decoded to its last token", serve,
                                   setup_server<decode::batching::static_batches, cheat::none>, release_state<toy_server>))
      .add_variant(kit::with_state("optimized", what, serve, std::move(cheat_setup), release_state<toy_server>));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::serving_pair("cheats:w5_serving_drops_requests", "W5",
                                         "continuous batching that never admits the requests arriving in the second half",
                                         aisp::cheats::setup_server<aisp::decode::batching::continuous,
                                                                    aisp::cheats::cheat::drops_late_requests>));
AISP_REGISTER(aisp::cheats::serving_pair("cheats:w6_serving_shortens_outputs", "W6",
                                         "continuous batching that retires every request after half its tokens",
                                         aisp::cheats::setup_server<aisp::decode::batching::continuous,
                                                                    aisp::cheats::cheat::shortens_outputs>));
// Note [declared latency trade]: the same starvation in a pair that declares the most a TTFT
// trade may allow (4x the baseline's worst): the held request waits far longer, and W12 still fires.
AISP_REGISTER(aisp::cheats::serving_pair("cheats:w12_serving_starves_behind_a_declared_trade", "W12",
                                         "continuous batching that holds the first request back until every other has arrived, "
                                         "in a pair that declares a TTFT trade",
                                         aisp::cheats::setup_server<aisp::decode::batching::continuous,
                                                                    aisp::cheats::cheat::starves_the_first>)
                  .trades_latency("ttft_s", aisp::max_traded_latency_factor,
                                  "continuous batching admits requests as slots free: a first token may come later"));
AISP_REGISTER(aisp::cheats::serving_pair("cheats:w12_serving_starves_a_request", "W12",
                                         "continuous batching that holds the first request back until every other has arrived",
                                         aisp::cheats::setup_server<aisp::decode::batching::continuous,
                                                                    aisp::cheats::cheat::starves_the_first>));
