// Host serving pairs judged by a recorded metric (Note [judged by a recorded metric]): labs/decode's
// scheduler on a toy model and a modeled clock (a launch costs 1 ms a 16 rows, as the GPU pair's
// Note [planned schedule]), whose run() records each request's time per output token. The
// outputs are each request's tokens of the toy model, so the judge verifies them as any output.
// - plugin_serving:chunked_prefill: prefill that stalls the decodes against chunked prefill;
//   the call times are alike, the TPOT p99 is not, and the verdict follows the TPOT.
// - plugin_serving:unrecorded: the optimized variant records nothing, so no verdict can be had.
// - plugin_serving:chunked_prefill_trading_ttft and :chunked_prefill_ttft_undeclared: a light
//   trace on a clock where a launch also costs a pass of its own, so chunks cost a long prompt
//   its first token (the worst TTFT 1.67x the baseline's: W12 would take it for a starved
//   request) and save the decodes' tokens; the first pair declares the trade (Note [declared
//   latency trade]) and passes, the second does not and fails W12.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../labs/decode/serving_scheduler.hpp"
#include "aisp/pair.hpp"
#include "aisp/pair_kit.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"

namespace {

using aisp::decode::batching;
using aisp::decode::request_shape;
using aisp::decode::serving_scheduler;

constexpr int vocab = 97;
constexpr double step_s = 1e-3;  // the modeled cost of a weight pass: a launch's 16 rows

// A pair's modeled clock: requests arrive gap_s apart, and a launch costs launch_passes passes
// besides one a 16 rows.
struct toy_clock {
  double gap_s;
  int launch_passes;
};
constexpr toy_clock saturated{2e-3, 0};
constexpr toy_clock light{20e-3, 1};

[[nodiscard]] int token_of(float draw) { return std::min(vocab - 1, static_cast<int>(draw * vocab)); }

// Every third request has the whole prompt width, the others short prompts; every request makes
// output_max tokens.
[[nodiscard]] std::vector<request_shape> trace_of(const aisp::workload& w, double gap_s = 0) {
  const auto prompt_max = static_cast<int>(w.get("prompt_max"));
  std::vector<request_shape> trace;
  for (int i = 0; i < static_cast<int>(w.get("requests")); ++i)
    trace.push_back({gap_s * i, i % 3 == 0 ? prompt_max : 1 + i % std::max(1, prompt_max / 4), static_cast<int>(w.get("output_max"))});
  return trace;
}

// Token i of a request follows from its prompt and its token i - 1.
[[nodiscard]] int next_token(int prompt_sum, int index, int previous) { return (prompt_sum * 31 + index * 7 + previous) % vocab; }

struct toy_server {
  serving_scheduler scheduler;
  std::vector<int> prompt_sums;  // filled at each call, sized in setup()
};

template <int Chunk, toy_clock Clock>
void setup_server(aisp::run_context& ctx) {
  aisp::make_state<toy_server>(ctx, serving_scheduler(trace_of(ctx.work(), Clock.gap_s), 4, batching::continuous, Chunk),
                               std::vector<int>(static_cast<std::size_t>(ctx.param("requests"))));
}

template <bool Records, toy_clock Clock>
void serve(aisp::run_context& ctx) {
  auto& server = aisp::state_of<toy_server>(ctx);
  auto& s = server.scheduler;
  const auto prompt_max = static_cast<std::size_t>(ctx.param("prompt_max"));
  const auto width = static_cast<std::size_t>(ctx.param("output_max"));
  const float* draws = ctx.as<const float>("prompt");
  int* tokens = ctx.as<int>("tokens");
  for (int r = 0; r < s.requests(); ++r) {
    int sum = 0;
    for (int p = 0; p < s.request(r).prompt_tokens; ++p) sum += token_of(draws[static_cast<std::size_t>(r) * prompt_max + static_cast<std::size_t>(p)]);
    server.prompt_sums[static_cast<std::size_t>(r)] = sum;
  }
  aisp::decode::run_to_end(s, [&](const aisp::decode::serving_launch& launch) {
    for (int i = 0; i < launch.picks(); ++i) {
      const auto r = static_cast<std::size_t>(launch.pick_request[static_cast<std::size_t>(i)]);
      const auto index = static_cast<std::size_t>(launch.pick_index[static_cast<std::size_t>(i)]);
      tokens[r * width + index] = next_token(server.prompt_sums[r], static_cast<int>(index), index == 0 ? 0 : tokens[r * width + index - 1]);
    }
    return step_s * (Clock.launch_passes + (launch.rows() + 15) / 16);
  });
  if (!Records) return;
  for (int r = 0; r < s.requests(); ++r) {
    const auto& times = s.token_times(r);
    ctx.record("tpot_s", (times.back() - times.front()) / static_cast<double>(times.size() - 1));
    ctx.record("ttft_s", times.front() - s.request(r).arrival_s);
  }
}

void toy_reference(aisp::reference_io& io) {
  const auto trace = trace_of(io.work());
  const auto prompt_max = static_cast<std::size_t>(io.param("prompt_max"));
  const auto width = static_cast<std::size_t>(io.param("output_max"));
  const auto draws = io.input("prompt");
  const auto tokens = io.output("tokens");
  for (std::size_t r = 0; r < trace.size(); ++r) {
    int sum = 0;
    for (int p = 0; p < trace[r].prompt_tokens; ++p) sum += token_of(static_cast<float>(draws[r * prompt_max + static_cast<std::size_t>(p)]));
    int previous = 0;
    for (std::size_t i = 0; i < width; ++i) tokens[r * width + i] = previous = next_token(sum, static_cast<int>(i), previous);
  }
}

template <toy_clock Clock>
[[nodiscard]] aisp::pair serving_pair(std::string target, aisp::stage_fn optimized_run) {
  return aisp::pair(std::move(target))
      .summary("a toy model served on a modeled clock: each request's tokens, (requests, output_max)")
      .on(aisp::backend::host)
      .benchmark_size({{"requests", 48}, {"prompt_max", 64}, {"output_max", 24}})
      .validation_size({{"requests", 2}, {"prompt_max", 3}, {"output_max", 4}})
      .validation_size({{"requests", 7}, {"prompt_max", 9}, {"output_max", 5}})
      .held_out_size({{"requests", 5}, {"prompt_max", 6}, {"output_max", 3}})
      .input("prompt", aisp::dtype::f32, std::vector<std::string>{"requests", "prompt_max"}, aisp::init_distribution::uniform_unit)
      .output("tokens", aisp::dtype::i32, {"requests", "output_max"})
      .work([](const aisp::workload& w) {
        return aisp::work_amount{.bytes = 4.0 * static_cast<double>(w.get("requests") * (w.get("prompt_max") + w.get("output_max"))), .flops = 0};
      })
      .reference(toy_reference)
      .judge_by_recorded("tpot_s", 0.99, "chunked prefill is for the decodes a long prompt would stall: their time per output token")
      .add_variant(aisp::kit::with_state("baseline", "continuous batching whose prefill launches stall the decodes", serve<true, Clock>,
                                         setup_server<0, Clock>, aisp::release_state<toy_server>))
      .add_variant(aisp::kit::with_state("optimized", "chunked prefill: every launch keeps the decodes, prompts fill 16 rows",
                                         std::move(optimized_run), setup_server<16, Clock>, aisp::release_state<toy_server>));
}

}  // namespace

AISP_REGISTER(serving_pair<saturated>("plugin_serving:chunked_prefill", serve<true, saturated>));
AISP_REGISTER(serving_pair<saturated>("plugin_serving:unrecorded", serve<false, saturated>));
AISP_REGISTER(serving_pair<light>("plugin_serving:chunked_prefill_trading_ttft", serve<true, light>)
                  .trades_latency("ttft_s", 3.0, "chunks spread a long prompt's prefill over launches: its first token later, the decodes' tokens sooner"));
AISP_REGISTER(serving_pair<light>("plugin_serving:chunked_prefill_ttft_undeclared", serve<true, light>));
