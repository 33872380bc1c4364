// continuous_batching: serving a seeded trace of requests (Poisson arrivals faster than the
// server, prompts uniform and outputs heavy-tailed: geometric, as chat outputs run;
// serving_trace.hpp) with the 1B model: static batching against continuous batching with prefill
// chunks mixed into the decode launches (serving_scheduler.hpp; whole-prompt prefill against
// chunks is labs/decode:chunked_prefill: on this trace its stalls put a decode's worst time per
// token at 6.8x static batching's, H200 2026-12-02). Every call replays the trace in real time:
// requests arrive at their times after the call starts, each launch's tokens are taken when it finishes (the host
// waits for every launch, as a server that streams tokens does), and each request's time to first
// token (TTFT) and time per output token (TPOT) are recorded (Note [recorded metrics]).
// Why faster: a static batch decodes until its longest request is done, with finished requests'
// slots idle and new arrivals waiting; continuous batching admits a request into any free slot
// at the next step, so the steps stay full. Both give every request the same tokens
// (Note [batch-invariant rows]): the outputs are each request's greedy tokens, checked against
// the fp64 reference, so a scheduler that drops or shortens a request fails verification.
// H100/H200: see README. Run: aisp bench run --targets labs/decode:continuous_batching
#include "aisp/pair_kit.hpp"
#include "serving_pair_parts.cuh"

namespace aisp::decode {
namespace {

[[nodiscard]] pair continuous_batching_pair() {
  pair declared("labs/decode:continuous_batching");
  with_serving_contract(declared)
      .summary("serving a saturated Poisson trace of 64 requests with heavy-tailed outputs (geometric, mean 32, up to 256) with "
               "the 1B model in 8 slots: static batches against continuous batching in launches of at most 16 rows (decodes first, then prompt chunks)")
      .benchmark_size({{"model", 2}, {"requests", 64}, {"rate", 1000}, {"prompt_max", 32}, {"output_max", 256}, {"output_mean", 32},
                       {"slots", 8}, {"step_us", 1000}, {"chunk", 16}})
      .validation_size({{"model", 0}, {"requests", 1}, {"rate", 1000}, {"prompt_max", 4}, {"output_max", 5}, {"output_mean", 0},
                        {"slots", 1}, {"step_us", 50}, {"chunk", 2}})
      .validation_size({{"model", 0}, {"requests", 7}, {"rate", 2000}, {"prompt_max", 6}, {"output_max", 12}, {"output_mean", 4},
                        {"slots", 3}, {"step_us", 50}, {"chunk", 5}})
      .validation_size({{"model", 1}, {"requests", 5}, {"rate", 1000}, {"prompt_max", 9}, {"output_max", 33}, {"output_mean", 0},
                        {"slots", 2}, {"step_us", 50}, {"chunk", 4}})
      .held_out_size({{"model", 1}, {"requests", 4}, {"rate", 1500}, {"prompt_max", 7}, {"output_max", 21}, {"output_mean", 6},
                      {"slots", 2}, {"step_us", 50}, {"chunk", 3}})
      .add_variant(decoder_variant("baseline",
                                   "static batching: when idle, every arrived request up to 8 is a batch, prefilled together and "
                                   "decoded until its longest member is done; arrivals wait for the whole batch",
                                   run_serving, setup_serving<batching::static_batches>, release_state<serving_variant>))
      .add_variant(decoder_variant("optimized",
                                   "continuous batching with chunked prefill: before every launch, arrived requests take free slots; "
                                   "the launch runs each decode row and fills up to `chunk` rows with the admitted prompts' next "
                                   "positions, so no prefill stalls the decodes; a finished request frees its slot at once",
                                   run_serving, setup_serving<batching::continuous, true>, release_state<serving_variant>));
  return declared;
}

}  // namespace
}  // namespace aisp::decode

AISP_REGISTER(aisp::decode::continuous_batching_pair());
